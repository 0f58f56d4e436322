package com.vertxcuda.library.rand;

import com.vertxcuda.device.host.HostAccess;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.library.impl.CudaPointers;
import com.vertxcuda.library.impl.EngineResult;

/** Generates numbers on one library's stream; called only from the submission thread. */
public interface RandEngine {

  /** Queues the generation; returns what to check once it completes, or null. */
  EngineResult enqueue(GpuStream stream, RandCall call) throws BackendException;

  /** Releases generators; when {@code poisoned}, without calling into the device. */
  void close(boolean poisoned);

  /** The host engine on the host backend, the cuRAND engine otherwise. */
  static RandEngine open(LibraryContext runtime, GpuStream stream) throws BackendException {
    if (HostAccess.isHost(runtime.device())) {
      return new HostRandEngine(runtime.device());
    }
    return new CudaRandEngine(CudaPointers.of(runtime.device()), stream);
  }
}
