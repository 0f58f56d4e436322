package com.vertxcuda;

/**
 * A failed vertx-cuda request, as the typed clients report it. It carries no stack trace: it is made
 * where the answer arrives (a reply handler, the device's completion thread), whose frames say
 * nothing about the caller, and an overloaded device turns away requests by the thousand.
 */
public class CudaException extends RuntimeException {

  private final FailureCode code;

  public CudaException(FailureCode code, String message) {
    super(code + ": " + message, null, true, false);
    this.code = code;
  }

  public CudaException(FailureCode code, String message, Throwable cause) {
    super(code + ": " + message, cause, true, false);
    this.code = code;
  }

  /** Why the request failed. */
  public FailureCode code() {
    return code;
  }
}
