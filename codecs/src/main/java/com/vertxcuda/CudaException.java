package com.vertxcuda;

/**
 * A failed vertx-cuda request, as the typed clients report it.
 */
public class CudaException extends RuntimeException {

  private final FailureCode code;

  public CudaException(FailureCode code, String message) {
    super(code + ": " + message);
    this.code = code;
  }

  public CudaException(FailureCode code, String message, Throwable cause) {
    super(code + ": " + message, cause);
    this.code = code;
  }

  /** Why the request failed. */
  public FailureCode code() {
    return code;
  }
}
