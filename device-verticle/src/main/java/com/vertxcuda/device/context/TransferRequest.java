package com.vertxcuda.device.context;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.device.spi.Footprint;

import java.nio.ByteBuffer;

/**
 * An upload from, or a download into, host memory the sender owns (the device host's mapping of
 * the shared region); local to one JVM. A transfer too large for that memory comes in chunks:
 * {@code transfer} names it (0: one piece), {@code from} is where in {@code handle}'s bytes this
 * chunk starts. The first chunk takes the transfer's place in the submission order and keeps it
 * until the last chunk is queued; later chunks continue it outside the order. Each chunk is
 * answered with the handle once its copy has finished.
 */
public record TransferRequest(BufferHandle handle, ByteBuffer host, Direction direction, long transfer, long from) {

  /** Which way the bytes go; REGISTER only page-locks {@code host} for later transfers. */
  public enum Direction { TO_DEVICE, TO_HOST, REGISTER }

  /** A transfer in one piece. */
  public TransferRequest(BufferHandle handle, ByteBuffer host, Direction direction) {
    this(handle, host, direction, 0, 0);
  }

  /** Whether this chunk ends its transfer (a transfer in one piece is its own last chunk). */
  public boolean last() {
    return transfer == 0 || handle == null || from + host.remaining() >= handle.byteLength();
  }

  /** A download reads the buffer; an upload (and a registration, which names none) writes it. */
  public Footprint footprint() {
    return direction == Direction.TO_HOST
      ? Footprint.builder().read(handle).build() : Footprint.builder().write(handle).build();
  }
}
