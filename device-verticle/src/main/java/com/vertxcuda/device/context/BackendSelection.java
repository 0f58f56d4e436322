package com.vertxcuda.device.context;

import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.cuda.CudaBackend;
import com.vertxcuda.device.cuda.CudaUnavailableException;
import com.vertxcuda.device.host.HostBackend;
import com.vertxcuda.device.spi.Backend;

/**
 * The one place that decides which backend a context opens. It lies beside the context that opens
 * it (in process isolation, in the device host), below the device tier; the device tier's own
 * decisions, made without loading a native library, are {@code device.impl.Backends}'.
 */
public final class BackendSelection {

  private static final System.Logger LOG = System.getLogger(BackendSelection.class.getName());

  private BackendSelection() {
  }

  /**
   * host for {@code host}; cuda for {@code cuda} (failing with what was searched when no GPU can be
   * used); for {@code auto}, cuda where usable, otherwise host with one log line saying why.
   */
  public static Backend select(DeviceOptions options) throws CudaUnavailableException {
    switch (options.getBackend()) {
      case HOST:
        return host(options);
      case CUDA:
        return CudaBackend.load(options);
      default:
        try {
          return CudaBackend.load(options);
        } catch (CudaUnavailableException e) {
          LOG.log(System.Logger.Level.INFO, "vertx-cuda: no usable GPU, device " + options.getDevice()
            + " runs on the host backend (" + e.getMessage() + ")");
          return host(options);
        }
    }
  }

  private static Backend host(DeviceOptions options) {
    long memory = options.getMemoryLimit() > 0 ? options.getMemoryLimit() : options.getHostMemory();
    return new HostBackend(memory);
  }
}
