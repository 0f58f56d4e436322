package com.vertxcuda.blas.impl;

import com.vertxcuda.device.context.ContextRuntime;
import com.vertxcuda.device.host.HostAccess;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.blas.impl.cuda.CudaBlasEngine;
import com.vertxcuda.library.impl.CudaPointers;

import java.util.List;

/**
 * Does the BLAS work of one verticle on its stream. Called only from the verticle's thread; calls
 * are already validated and ordered.
 */
public interface BlasEngine {

  /** A scalar result, readable once the work that produces it has completed. */
  interface Scalar {
    double read();
  }

  /** Queues one call; returns its scalar result for DOT, NRM2, ASUM, IAMAX, IAMIN, else null. */
  Scalar enqueue(GpuStream stream, BlasCall call) throws BackendException;

  /** Queues GEMM calls of one shape (dtype, transposes, sizes, leading dimensions, alpha, beta) as one batched call. */
  void enqueueGemmBatch(GpuStream stream, List<BlasCall> calls) throws BackendException;

  /** Releases native resources; when {@code poisoned}, without calling into the device. */
  void close(boolean poisoned);

  /** The host engine on the host backend, the cuBLAS engine otherwise. */
  static BlasEngine open(ContextRuntime runtime, GpuStream stream) throws BackendException {
    if (HostAccess.isHost(runtime.device())) {
      return new HostBlasEngine(runtime.device());
    }
    return new CudaBlasEngine(runtime.device(), CudaPointers.of(runtime.device()), stream);
  }
}
