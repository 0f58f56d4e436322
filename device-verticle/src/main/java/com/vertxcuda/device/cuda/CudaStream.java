package com.vertxcuda.device.cuda;

import com.vertxcuda.device.spi.GpuStream;
import jcuda.driver.CUstream;

/** A non-blocking CUDA stream. */
final class CudaStream implements GpuStream {

  final CUstream handle;
  private final String name;

  CudaStream(CUstream handle, String name) {
    this.handle = handle;
    this.name = name;
  }

  @Override
  public String name() {
    return name;
  }
}
