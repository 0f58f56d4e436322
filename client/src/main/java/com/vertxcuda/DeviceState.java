package com.vertxcuda;

/** Where a device stands. */
public enum DeviceState {
  /** The context is being built; requests queue. */
  STARTING,
  /** Requests are served. */
  READY,
  /** The context was lost and is being rebuilt; requests queue. */
  REBUILDING,
  /** The device cannot be recovered (restart budget spent, or a sticky error in-process); requests fail fast. */
  LOST,
  /** The device verticle was undeployed. */
  STOPPED
}
