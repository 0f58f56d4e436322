package com.vertxcuda.library.impl;

import com.vertxcuda.FailureCode;
import com.vertxcuda.device.cuda.CudaErrors;
import com.vertxcuda.device.spi.BackendException;

import java.util.function.IntFunction;

/**
 * Turns status codes of the CUDA libraries and the driver into {@link BackendException}s: a library
 * status fails the one request; a driver error of the sticky class poisons the context.
 */
public final class CudaStatus {

  private CudaStatus() {
  }

  /** Fails the request when a library call returned anything but success. */
  public static void check(int status, String call, IntFunction<String> names) throws BackendException {
    if (status != 0) {
      throw BackendException.of(FailureCode.LIBRARY_ERROR, call + " failed: " + names.apply(status));
    }
  }

  /** Checks a driver call; the cuda backend's {@link CudaErrors} decides what is sticky. */
  public static void checkDriver(int status, String call) throws BackendException {
    CudaErrors.check(status, call);
  }
}
