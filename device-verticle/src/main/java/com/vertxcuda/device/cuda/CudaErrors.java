package com.vertxcuda.device.cuda;

import com.vertxcuda.FailureCode;
import com.vertxcuda.device.spi.BackendException;
import jcuda.driver.CUresult;

import java.util.Set;

/**
 * The one place that turns CUDA driver results into {@link BackendException}s. Sticky errors
 * (the device-side faults CUDA documents as recoverable only by ending the process) poison every
 * context of this process: after the first one no code here calls into CUDA again.
 */
public final class CudaErrors {

  // CUresult codes of the sticky class; numbers where JCuda 11.8 has no constant for a newer code.
  private static final Set<Integer> STICKY = Set.of(
    CUresult.CUDA_ERROR_DEINITIALIZED,
    CUresult.CUDA_ERROR_ECC_UNCORRECTABLE,
    CUresult.CUDA_ERROR_NVLINK_UNCORRECTABLE,
    CUresult.CUDA_ERROR_ILLEGAL_ADDRESS,
    CUresult.CUDA_ERROR_LAUNCH_TIMEOUT,
    CUresult.CUDA_ERROR_CONTEXT_IS_DESTROYED,
    CUresult.CUDA_ERROR_ASSERT,
    CUresult.CUDA_ERROR_HARDWARE_STACK_ERROR,
    CUresult.CUDA_ERROR_ILLEGAL_INSTRUCTION,
    CUresult.CUDA_ERROR_MISALIGNED_ADDRESS,
    CUresult.CUDA_ERROR_INVALID_ADDRESS_SPACE,
    CUresult.CUDA_ERROR_INVALID_PC,
    CUresult.CUDA_ERROR_LAUNCH_FAILED,
    CUresult.CUDA_ERROR_EXTERNAL_DEVICE,
    721, // CUDA_ERROR_TENSOR_MEMORY_LEAK (CUDA 12.8+)
    809  // CUDA_ERROR_CONTAINED (CUDA 12.x): a contained ECC error, the context is lost
  );

  private static volatile String poisonedBy;

  private CudaErrors() {
  }

  /** Whether {@code result} belongs to the class that poisons a context for good. */
  public static boolean isSticky(int result) {
    return STICKY.contains(result);
  }

  /** The CUDA name of a result, e.g. CUDA_ERROR_ILLEGAL_ADDRESS. */
  public static String name(int result) {
    String s = CUresult.stringFor(result);
    return s.startsWith("INVALID CUresult") ? "CUresult " + result : s;
  }

  /** Throws unless {@code result} is CUDA_SUCCESS; {@code what} names the call for the message. */
  public static void check(int result, String what) throws BackendException {
    if (result != CUresult.CUDA_SUCCESS) {
      throw failure(result, what);
    }
  }

  /** The exception for a failed call; a sticky one marks this process's CUDA use poisoned. */
  public static BackendException failure(int result, String what) {
    String message = what + " failed: " + name(result);
    if (isSticky(result)) {
      if (poisonedBy == null) {
        poisonedBy = message;
      }
      return BackendException.sticky(message);
    }
    if (result == CUresult.CUDA_ERROR_OUT_OF_MEMORY) {
      return BackendException.of(FailureCode.OUT_OF_MEMORY, message);
    }
    return BackendException.of(FailureCode.LIBRARY_ERROR, message);
  }

  /** The sticky error that ended this process's use of CUDA, or null. */
  public static String poisonedBy() {
    return poisonedBy;
  }

  /** Throws the sticky error again once the process's CUDA use is poisoned, without calling CUDA. */
  public static void checkAlive() throws BackendException {
    String p = poisonedBy;
    if (p != null) {
      throw BackendException.sticky(p);
    }
  }
}
