package com.vertxcuda.library.impl;

import com.vertxcuda.FailureCode;
import jcuda.jcublas.cublasStatus;
import jcuda.jcufft.cufftResult;
import jcuda.jcurand.curandStatus;
import jcuda.nvrtc.nvrtcResult;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every library's statuses map in one place: a failed allocation is OUT_OF_MEMORY, the rest LIBRARY_ERROR. */
class CudaStatusTest {

  @Test
  void allocationFailuresOfEveryLibraryAreOutOfMemory() {
    assertEquals(FailureCode.OUT_OF_MEMORY,
      CudaStatus.CUBLAS.failure(cublasStatus.CUBLAS_STATUS_ALLOC_FAILED, "cublasSgemm").code());
    assertEquals(FailureCode.OUT_OF_MEMORY,
      CudaStatus.CUFFT.failure(cufftResult.CUFFT_ALLOC_FAILED, "cufftPlanMany").code());
    assertEquals(FailureCode.OUT_OF_MEMORY, CudaStatus.CURAND.failure(
      curandStatus.CURAND_STATUS_ALLOCATION_FAILED, "curandCreateGenerator").code());
    assertEquals(FailureCode.OUT_OF_MEMORY,
      CudaStatus.NVRTC.failure(nvrtcResult.NVRTC_ERROR_OUT_OF_MEMORY, "nvrtcCompileProgram").code());
  }

  @Test
  void otherStatusesAreLibraryErrorsNamingTheCall() {
    var e = CudaStatus.CUBLAS.failure(cublasStatus.CUBLAS_STATUS_INVALID_VALUE, "cublasSgemm");
    assertEquals(FailureCode.LIBRARY_ERROR, e.code());
    assertTrue(e.getMessage().contains("cublasSgemm") && e.getMessage().contains("INVALID_VALUE"), e.getMessage());
  }
}
