package com.vertxcuda.device.host;

import com.vertxcuda.device.spi.Backend;
import com.vertxcuda.device.spi.DeviceContext;

/**
 * The pure-Java backend: asynchronous like a GPU (a stream is a single-thread executor, an event a
 * completion marker), real bytes in off-heap memory, and faults on demand.
 */
public final class HostBackend implements Backend {

  private final long memory;
  private final long startDelay;

  /** A host "device" with {@code memory} bytes that takes {@code startDelayMillis} to open. */
  public HostBackend(long memory, long startDelayMillis) {
    this.memory = memory;
    this.startDelay = startDelayMillis;
  }

  @Override
  public String name() {
    return "host";
  }

  @Override
  public DeviceContext open(int device) {
    if (startDelay > 0) {
      try {
        Thread.sleep(startDelay);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    return new HostContext(device, memory);
  }
}
