package com.vertxcuda.device.impl;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;

/**
 * How a failed hand-off from the device tier to the context tier reads to the caller, in one place
 * (used by the device verticle and by the device-host link).
 */
public final class ForwardFailures {

  private ForwardFailures() {
  }

  /**
   * Nobody at a library's address means the library is not deployed (UNSUPPORTED); nobody at the
   * context's address means the context is gone (CONTEXT_LOST); everything else keeps its code.
   */
  public static CudaException map(Throwable t, boolean library, long generation) {
    if (t instanceof ReplyException && ((ReplyException) t).failureType() == ReplyFailure.NO_HANDLERS) {
      return library
        ? new CudaException(FailureCode.UNSUPPORTED, "this library is not deployed on this device")
        : new CudaException(FailureCode.CONTEXT_LOST, "the context of generation " + generation + " is gone");
    }
    return Failures.toCudaException(t);
  }
}
