package com.vertxcuda.device.spi;

import java.nio.ByteBuffer;

/**
 * A context that can page-lock host memory it did not allocate (cuMemHostRegister), so copies from
 * and into it run at pinned speed: the device host registers the shared region once.
 */
public interface HostMemoryRegistration {

  /** Page-locks {@code memory} (direct) for the life of the context. */
  void registerHostMemory(ByteBuffer memory) throws BackendException;
}
