package com.vertxcuda.device.cuda;

import com.vertxcuda.device.spi.DeviceMemory;
import jcuda.driver.CUdeviceptr;

/** A block of the caching allocator: a device pointer and its size class. */
final class CudaMemory implements DeviceMemory {

  final CUdeviceptr pointer;
  /** The device address, read once (it goes into pointer arrays for batched calls). */
  final long address;
  private final long size;

  CudaMemory(CUdeviceptr pointer, long size) {
    this.pointer = pointer;
    this.address = DeviceAddresses.of(pointer);
    this.size = size;
  }

  @Override
  public long size() {
    return size;
  }
}
