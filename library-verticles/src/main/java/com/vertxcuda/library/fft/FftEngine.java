package com.vertxcuda.library.fft;

import com.vertxcuda.device.host.HostAccess;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.library.impl.CudaPointers;
import com.vertxcuda.library.impl.EngineResult;

/**
 * Makes plans and runs FFTs on one library's stream. {@link #plan} runs on a preparation thread (the
 * context current there), everything else on the submission thread.
 */
public interface FftEngine {

  /** A plan for one {@link FftPlanKey}, kept by the library's plan cache. */
  interface Plan {
    /** The memory the plan holds while it lives, in bytes (cuFFT: its work area; host: its arrays). */
    long bytes();
  }

  Plan plan(FftPlanKey key) throws BackendException;

  /**
   * An upper bound of {@link Plan#bytes()} for {@code key}, known before the plan is made: the plan
   * cache reserves it before it builds the plan. 0 when the engine cannot tell (then the plan is
   * counted once made).
   */
  default long estimatedBytes(FftPlanKey key) {
    return 0;
  }

  /** Queues {@code call} with {@code plan} (made for the call's key); returns what to check once it completes, or null. */
  EngineResult enqueue(GpuStream stream, Plan plan, FftCall call) throws BackendException;

  /** Releases a plan whose work has completed; when {@code poisoned}, without calling into the device. */
  void destroy(Plan plan, boolean poisoned);

  /** The host engine on the host backend, the cuFFT engine otherwise. */
  static FftEngine open(LibraryContext runtime, GpuStream stream) throws BackendException {
    if (HostAccess.isHost(runtime.device())) {
      return new HostFftEngine(runtime.device());
    }
    return new CudaFftEngine(CudaPointers.of(runtime.device()), stream);
  }
}
