package com.vertxcuda.device.spi;

/** A block of device memory, owned by the allocation table; released through its context. */
public interface DeviceMemory {

  /** Usable bytes (at least what was asked for). */
  long size();
}
