package com.vertxcuda.device.spi;

/**
 * A way to run device work: {@code cuda} (JCuda) or {@code host} (pure Java). The verticles
 * orchestrate; a backend does the device work.
 */
public interface Backend {

  /** "cuda" or "host". */
  String name();

  /**
   * Opens device {@code device}. Called on the context's own thread, which stays the thread of every
   * later call on the returned context except those documented as thread-safe.
   */
  DeviceContext open(int device) throws BackendException;
}
