package com.vertxcuda.library.impl;

import com.vertxcuda.FailureCode;
import com.vertxcuda.device.spi.BackendException;
import jcuda.driver.CUresult;

import java.util.Set;
import java.util.function.IntFunction;

/**
 * Turns status codes of the CUDA libraries and the driver into {@link BackendException}s: a library
 * status fails the one request; a driver error of the sticky class poisons the context.
 */
public final class CudaStatus {

  // Errors CUDA documents as leaving the context unusable (illegal address, assert, launch failure, ECC, ...).
  private static final Set<Integer> STICKY = Set.of(214, 700, 710, 713, 714, 715, 716, 717, 718, 719, 720);

  private CudaStatus() {
  }

  /** Fails the request when a library call returned anything but success. */
  public static void check(int status, String call, IntFunction<String> names) throws BackendException {
    if (status != 0) {
      throw BackendException.of(FailureCode.LIBRARY_ERROR, call + " failed: " + names.apply(status));
    }
  }

  /** Checks a driver call; sticky errors poison the context. */
  public static void checkDriver(int status, String call) throws BackendException {
    if (status == 0) {
      return;
    }
    String text = call + " failed: " + CUresult.stringFor(status);
    if (STICKY.contains(status)) {
      throw BackendException.sticky(text);
    }
    throw BackendException.of(status == 2 ? FailureCode.OUT_OF_MEMORY : FailureCode.LIBRARY_ERROR, text);
  }
}
