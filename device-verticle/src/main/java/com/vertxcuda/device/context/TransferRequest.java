package com.vertxcuda.device.context;

import com.vertxcuda.BufferHandle;

import java.nio.ByteBuffer;

/**
 * An upload from, or a download into, host memory the sender owns (the device host's mapping of
 * the shared region). Local to one JVM: it never crosses a wire. Replied with the handle once the
 * copy has finished.
 */
public final class TransferRequest {

  /** Which way the bytes go; REGISTER only page-locks {@code host} for later transfers. */
  public enum Direction { TO_DEVICE, TO_HOST, REGISTER }

  private final BufferHandle handle;
  private final ByteBuffer host;
  private final Direction direction;

  public TransferRequest(BufferHandle handle, ByteBuffer host, Direction direction) {
    this.handle = handle;
    this.host = host;
    this.direction = direction;
  }

  public BufferHandle handle() { return handle; }
  public ByteBuffer host() { return host; }
  public Direction direction() { return direction; }
}
