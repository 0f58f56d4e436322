package com.vertxcuda.device.spi;

import com.vertxcuda.BufferHandle;

/** A live buffer of a context, resolved from a handle that was checked. */
public interface DeviceBuffer {

  /** The handle of the whole buffer. */
  BufferHandle handle();

  DeviceMemory memory();

  /** Its size in bytes. */
  long bytes();
}
