package com.vertxcuda.device.spi;

import com.vertxcuda.FailureCode;
import com.vertxcuda.internal.CodedFailure;

/**
 * A backend failure. A sticky one (illegal address, launch failure, ...) means the context is
 * poisoned: it must never be touched again. Its code is data that {@link com.vertxcuda.Failures}
 * reads; the backend's status table (e.g. {@code CudaErrors}) decided it.
 */
public class BackendException extends Exception implements CodedFailure {

  private final FailureCode code;
  private final boolean sticky;

  public BackendException(FailureCode code, String message, boolean sticky) {
    super(message);
    this.code = code;
    this.sticky = sticky;
  }

  /** A failure of one request only. */
  public static BackendException of(FailureCode code, String message) {
    return new BackendException(code, message, false);
  }

  /** A sticky error: the context is poisoned. */
  public static BackendException sticky(String message) {
    return new BackendException(FailureCode.CONTEXT_LOST, message, true);
  }

  @Override
  public FailureCode code() {
    return code;
  }

  @Override
  public boolean isSticky() {
    return sticky;
  }
}
