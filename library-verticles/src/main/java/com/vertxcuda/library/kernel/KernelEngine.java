package com.vertxcuda.library.kernel;

import com.vertxcuda.device.host.HostAccess;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.library.impl.CudaPointers;
import com.vertxcuda.library.impl.EngineResult;

import java.util.List;

/**
 * Loads, compiles and launches kernels on one library's stream. {@link #load} and {@link #compile}
 * run on preparation threads (the context current there, several at once), everything else on the
 * submission thread.
 */
public interface KernelEngine {

  /** Loads a module from PTX (NUL-terminated text) or a cubin/fatbin image. */
  Object load(byte[] image) throws BackendException;

  /** Compiles CUDA C to PTX; {@code log} receives the compiler's messages. */
  String compile(String source, String name, String arch, List<String> options, StringBuilder log)
    throws BackendException;

  /** The device's virtual architecture, e.g. "compute_90". */
  String deviceArch();

  /** Queues a launch of a function of a loaded module. */
  void launch(GpuStream stream, Object module, String function, KernelCall call) throws BackendException;

  void unload(Object module) throws BackendException;

  /** Queues a built-in elementwise call; returns what to check once it completes, or null. */
  EngineResult builtin(GpuStream stream, KernelCall call) throws BackendException;

  /** Releases modules; when {@code poisoned}, without calling into the device. */
  void close(boolean poisoned);

  /** The Java engine on the host backend, the CUDA driver's module API otherwise. */
  static KernelEngine open(LibraryContext runtime, GpuStream stream) throws BackendException {
    if (HostAccess.isHost(runtime.device())) {
      return new HostKernelEngine(runtime.device());
    }
    return new CudaKernelEngine(CudaPointers.of(runtime.device()), stream);
  }
}
