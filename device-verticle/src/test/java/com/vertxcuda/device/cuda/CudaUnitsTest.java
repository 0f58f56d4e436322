package com.vertxcuda.device.cuda;

import com.vertxcuda.FailureCode;
import jcuda.driver.CUresult;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The parts of the cuda backend that need no GPU: error classes, size classes. */
@Tag("runs-once")
class CudaUnitsTest {

  @Test
  void deviceFaultsAreStickyOtherErrorsFailOneRequest() {
    for (int r : new int[] {CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, CUresult.CUDA_ERROR_ILLEGAL_INSTRUCTION,
      CUresult.CUDA_ERROR_MISALIGNED_ADDRESS, CUresult.CUDA_ERROR_ASSERT, CUresult.CUDA_ERROR_LAUNCH_FAILED,
      CUresult.CUDA_ERROR_ECC_UNCORRECTABLE, CUresult.CUDA_ERROR_HARDWARE_STACK_ERROR, CUresult.CUDA_ERROR_INVALID_PC}) {
      assertTrue(CudaErrors.isSticky(r), CudaErrors.name(r));
    }
    for (int r : new int[] {CUresult.CUDA_ERROR_OUT_OF_MEMORY, CUresult.CUDA_ERROR_INVALID_VALUE,
      CUresult.CUDA_ERROR_NOT_READY, CUresult.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES}) {
      assertFalse(CudaErrors.isSticky(r), CudaErrors.name(r));
    }
    assertEquals(FailureCode.OUT_OF_MEMORY, CudaErrors.failure(CUresult.CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc").code());
    assertEquals(FailureCode.LIBRARY_ERROR, CudaErrors.failure(CUresult.CUDA_ERROR_INVALID_VALUE, "x").code());
    assertEquals("CUDA_ERROR_ILLEGAL_ADDRESS", CudaErrors.name(CUresult.CUDA_ERROR_ILLEGAL_ADDRESS));
  }

  @Test
  void smallRequestsShareSizeClassesLargeOnesRoundTo2MiB() {
    assertEquals(512, CudaContext.sizeClass(1));
    assertEquals(4096, CudaContext.sizeClass(4000));
    assertEquals(1 << 20, CudaContext.sizeClass(600_000));
    assertEquals(4L << 20, CudaContext.sizeClass((2L << 20) + 1));
    assertEquals(1L << 30, CudaContext.sizeClass(1L << 30));
    assertEquals(64 * 1024, PinnedMemory.sizeClass(10));
    assertEquals(256L << 20, PinnedMemory.sizeClass((128L << 20) + 1));
  }
}
