package com.vertxcuda.device.host;

import com.vertxcuda.device.spi.Backend;
import com.vertxcuda.device.spi.DeviceContext;

/**
 * The pure-Java backend: asynchronous like a GPU (a stream is a single-thread executor, an event a
 * completion marker), real bytes in off-heap memory, and faults on demand.
 */
public final class HostBackend implements Backend {

  private final long memory;

  /** A host "device" with {@code memory} bytes. */
  public HostBackend(long memory) {
    this.memory = memory;
  }

  @Override
  public String name() {
    return "host";
  }

  @Override
  public DeviceContext open(int device) {
    return new HostContext(device, memory);
  }
}
