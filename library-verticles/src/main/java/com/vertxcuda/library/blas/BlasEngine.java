package com.vertxcuda.library.blas;

import com.vertxcuda.device.host.HostAccess;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.library.impl.CudaPointers;
import com.vertxcuda.library.impl.EngineResult;

import java.util.List;

/**
 * Does the BLAS work of one context on its library's stream. Called only from the submission thread; calls
 * are already validated and ordered.
 */
public interface BlasEngine {

  /**
   * Queues one call; returns what to read once it completes (the scalar of DOT, NRM2, ASUM, IAMAX,
   * IAMIN), or null when there is nothing to read.
   */
  EngineResult enqueue(GpuStream stream, BlasCall call) throws BackendException;

  /**
   * Queues one call as a step of a recorded pipeline, issued once (under stream capture on cuda)
   * and replayed: it may stage nothing from host memory when queued (a GEMM_BATCHED_EX then runs
   * member by member instead of over staged pointer arrays). As {@link #enqueue} where nothing is staged.
   */
  default EngineResult enqueueRecorded(GpuStream stream, BlasCall call) throws BackendException {
    return enqueue(stream, call);
  }

  /**
   * Queues GEMM calls of one shape (dtype, transposes, sizes, leading dimensions, alpha, beta) as
   * one batched call; returns what to read once it completes, or null.
   */
  EngineResult enqueueGemmBatch(GpuStream stream, List<BlasCall> calls) throws BackendException;

  /** Releases native resources; when {@code poisoned}, without calling into the device. */
  void close(boolean poisoned);

  /** The host engine on the host backend, the cuBLAS engine otherwise. */
  static BlasEngine open(LibraryContext runtime, GpuStream stream) throws BackendException {
    if (HostAccess.isHost(runtime.device())) {
      return new HostBlasEngine(runtime.device());
    }
    return new CudaBlasEngine(runtime.device(), CudaPointers.of(runtime.device()), stream);
  }
}
