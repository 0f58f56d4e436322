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

  /**
   * Fails the request when a library call returned anything but success: OUT_OF_MEMORY when the
   * library could not allocate (its workspace, a plan, a generator's state), LIBRARY_ERROR otherwise.
   * Every library status goes through here.
   */
  public static void check(int status, String call, IntFunction<String> names) throws BackendException {
    if (status != 0) {
      throw failure(names.apply(status), call);
    }
  }

  /** The failure a library status named {@code name} stands for. */
  static BackendException failure(String name, String call) {
    // cuBLAS ALLOC_FAILED, cuFFT ALLOC_FAILED, cuRAND ALLOCATION_FAILED, NVRTC OUT_OF_MEMORY.
    boolean memory = name != null && (name.contains("ALLOC") || name.contains("OUT_OF_MEMORY"));
    return BackendException.of(memory ? FailureCode.OUT_OF_MEMORY : FailureCode.LIBRARY_ERROR, call + " failed: " + name);
  }

  /** Checks a driver call; the cuda backend's {@link CudaErrors} decides what is sticky. */
  public static void checkDriver(int status, String call) throws BackendException {
    CudaErrors.check(status, call);
  }
}
