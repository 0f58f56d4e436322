package com.vertxcuda.library.impl;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;

import java.util.function.DoubleSupplier;

/** The result of work run on a host-backend stream: its value, or what it threw. */
public final class HostResult implements EngineResult {

  private volatile double value;
  private volatile Throwable failure;

  /** Wraps {@code work} so that its value or failure lands here. */
  public Runnable capture(DoubleSupplier work) {
    return () -> {
      try {
        value = work.getAsDouble();
      } catch (RuntimeException | Error e) {
        failure = e;
      }
    };
  }

  @Override
  public double value() {
    Throwable t = failure;
    if (t != null) {
      throw new CudaException(FailureCode.LIBRARY_ERROR, "the host engine failed: " + t, t);
    }
    return value;
  }
}
