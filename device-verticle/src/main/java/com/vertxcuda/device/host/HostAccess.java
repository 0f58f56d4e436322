package com.vertxcuda.device.host;

import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.DeviceMemory;
import com.vertxcuda.device.spi.GpuStream;

import java.nio.ByteBuffer;

/**
 * What the host engines of the library verticles need from the host backend: the bytes of a
 * buffer, and a way to run computation on a stream (its thread), in order with the stream's other
 * work, the way a kernel launch runs on a CUDA stream.
 */
public final class HostAccess {

  private HostAccess() {
  }

  /** Whether {@code device} is a host-backend context. */
  public static boolean isHost(DeviceContext device) {
    return device instanceof HostContext;
  }

  /** A little-endian view of {@code bytes} bytes of host-backend memory at {@code byteOffset}. */
  public static ByteBuffer bytes(DeviceMemory memory, long byteOffset, long bytes) {
    return HostContext.slice(memory, byteOffset, bytes);
  }

  /** Queues {@code work} on a host-backend stream; it runs after everything queued there before. */
  public static void enqueue(DeviceContext device, GpuStream stream, Runnable work) throws BackendException {
    ((HostContext) device).enqueue(stream, work);
  }
}
