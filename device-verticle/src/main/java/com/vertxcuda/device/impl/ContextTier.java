package com.vertxcuda.device.impl;

import com.vertxcuda.message.DeviceInfo;
import io.vertx.core.Future;

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
}
