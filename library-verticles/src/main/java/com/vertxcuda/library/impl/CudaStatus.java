package com.vertxcuda.library.impl;

import com.vertxcuda.FailureCode;
import com.vertxcuda.device.cuda.CudaErrors;
import com.vertxcuda.device.spi.BackendException;
import jcuda.jcublas.cublasStatus;
import jcuda.jcufft.cufftResult;
import jcuda.jcurand.curandStatus;
import jcuda.nvrtc.nvrtcResult;

import java.util.function.IntFunction;

/**
 * The status tables of the CUDA libraries: which status of each library is an allocation failure
 * (OUT_OF_MEMORY; the rest fail the one request as LIBRARY_ERROR), as data that the one mapper,
 * {@link com.vertxcuda.Failures}, reads from the {@link BackendException} thrown here. Driver results
 * go to {@link CudaErrors}, which also knows which are sticky.
 */
public enum CudaStatus {
  CUBLAS(cublasStatus::stringFor, cublasStatus.CUBLAS_STATUS_ALLOC_FAILED),
  CUFFT(cufftResult::stringFor, cufftResult.CUFFT_ALLOC_FAILED),
  CURAND(curandStatus::stringFor, curandStatus.CURAND_STATUS_ALLOCATION_FAILED),
  NVRTC(nvrtcResult::stringFor, nvrtcResult.NVRTC_ERROR_OUT_OF_MEMORY);

  private final IntFunction<String> names;
  private final int allocationFailed;

  CudaStatus(IntFunction<String> names, int allocationFailed) {
    this.names = names;
    this.allocationFailed = allocationFailed;
  }

  /** Fails the request when a call of this library returned anything but success. */
  public void check(int status, String call) throws BackendException {
    if (status != 0) {
      throw failure(status, call);
    }
  }

  /** The failure a status of this library stands for. */
  BackendException failure(int status, String call) {
    FailureCode code = status == allocationFailed ? FailureCode.OUT_OF_MEMORY : FailureCode.LIBRARY_ERROR;
    return BackendException.of(code, call + " failed: " + names.apply(status));
  }

  /** Checks a driver call; the cuda backend's {@link CudaErrors} decides what is sticky. */
  public static void checkDriver(int status, String call) throws BackendException {
    CudaErrors.check(status, call);
  }
}
