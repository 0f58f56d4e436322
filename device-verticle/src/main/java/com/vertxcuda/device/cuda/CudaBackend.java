package com.vertxcuda.device.cuda;

import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.spi.IdleWait;
import com.vertxcuda.device.spi.Backend;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import io.vertx.core.buffer.Buffer;

/** The JCuda backend: contexts are {@link CudaContext}s over the devices' primary contexts. */
public final class CudaBackend implements Backend {

  private final DeviceOptions options;

  private CudaBackend(DeviceOptions options) {
    this.options = options;
  }

  /**
   * Whether an NVIDIA driver library (libcuda.so.1) is on disk where {@link NativeLoading} looks;
   * no native library is loaded to find out.
   */
  public static boolean driverPresent(DeviceOptions options) {
    return NativeLoading.driverPath(options) != null;
  }

  /**
   * A usable cuda backend for {@code options.getDevice()}, or why there is none: the exception
   * names every place searched for the driver and the CUDA libraries. The CUDA libraries the
   * library verticles use are made loadable here too (forwarders where needed); one that cannot
   * be found is logged, and its verticle answers UNSUPPORTED.
   */
  public static Backend load(DeviceOptions options) throws CudaUnavailableException {
    NativeLoading.driver(options);
    NativeLoading.prepareAll(options);
    return new CudaBackend(new DeviceOptions(options));
  }

  /** Prints whether the cuda backend is usable here (exit 0) or why not (exit 1); the GPU bundle's run.sh asks. */
  public static void main(String[] args) {
    try {
      load(new DeviceOptions().setCudaLibraryPath(args.length > 0 ? args[0] : null));
      System.out.println("cuda");
      System.exit(0);
    } catch (CudaUnavailableException e) {
      System.out.println("host: " + e.getMessage());
      System.exit(1);
    }
  }

  @Override
  public String name() {
    return "cuda";
  }

  @Override
  public DeviceContext open(int device) throws BackendException {
    return CudaContext.open(device, IdleWait.spinNanos(options));
  }

  /** The options this backend was loaded with (library verticles read the CUDA library path here). */
  public DeviceOptions options() {
    return options;
  }

  /** Whether {@code context} is a CUDA context. */
  public static boolean isCuda(DeviceContext context) {
    return context instanceof CudaContext;
  }

  /** {@code context} as a {@link CudaContext}; check {@link #isCuda} first. */
  public static CudaContext cuda(DeviceContext context) {
    if (!(context instanceof CudaContext)) {
      throw new IllegalArgumentException("not a cuda context: " + context.getClass().getName());
    }
    return (CudaContext) context;
  }

  /**
   * An empty Buffer over pinned host memory with capacity {@code bytes}: fill it and upload it, and
   * the copy goes by DMA straight from it. Hand it back with {@link PinnedMemory#release(Buffer)}
   * (or leave it to the garbage collector).
   */
  public static Buffer pinnedBuffer(int bytes) throws CudaUnavailableException {
    DeviceOptions defaults = new DeviceOptions();
    NativeLoading.driver(defaults);
    try {
      return PinnedMemory.shared(defaults.getDevice()).buffer(bytes);
    } catch (BackendException e) {
      // The driver's code travels as the cause, for Failures to read.
      throw new CudaUnavailableException("no pinned memory for " + bytes + " bytes: " + e.getMessage(), e);
    }
  }
}
