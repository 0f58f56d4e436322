package com.vertxcuda.device.impl;

import com.vertxcuda.message.DeviceInfo;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;

/**
 * One running incarnation of the context tier, seen from the device tier. The device tier talks
 * to it only through event-bus messages at the generation's addresses; this handle only starts and
 * stops it, so the tier can live in this JVM or in a device-host process.
 */
public interface ContextTier {

  /** What the context reported about its device when it became ready. */
  DeviceInfo info();

  /** Stops the incarnation (undeploys it or ends its process). */
  Future<Void> stop();

  /**
   * An empty buffer with room for {@code bytes} that uploads without a host copy (in process
   * isolation it lies in the shared region); fill it with the append methods.
   */
  default Buffer allocateTransferBuffer(int bytes) {
    return HostBufferPool.shared().lease(bytes);
  }

  /** Returns a transfer buffer (or a downloaded one) to its pool at once; false if it has none. */
  default boolean releaseTransferBuffer(Buffer buffer) {
    return HostBufferPool.shared().release(buffer);
  }
}
