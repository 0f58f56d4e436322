package com.vertxcuda.device.spi;

/** An ordered queue of device work. Each stream is used from one thread only. */
public interface GpuStream {

  String name();
}
