package com.vertxcuda.device.cuda;

/** No GPU can be used here; the message names what was searched. */
public class CudaUnavailableException extends Exception {

  public CudaUnavailableException(String message) {
    super(message);
  }

  public CudaUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
