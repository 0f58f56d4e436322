package com.vertxcuda.device.cuda;

import com.vertxcuda.device.spi.DeviceMemory;
import jcuda.driver.CUdeviceptr;

/** A block of the caching allocator: a device pointer and its size class. */
final class CudaMemory implements DeviceMemory {

  final CUdeviceptr pointer;
  private final long size;

  CudaMemory(CUdeviceptr pointer, long size) {
    this.pointer = pointer;
    this.size = size;
  }

  @Override
  public long size() {
    return size;
  }
}
