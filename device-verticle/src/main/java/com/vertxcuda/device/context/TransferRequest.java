package com.vertxcuda.device.context;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.device.spi.Footprint;

import java.nio.ByteBuffer;

/**
 * An upload from, or a download into, host memory the sender owns (the device host's mapping of
 * the shared region) of exactly the bytes of {@code handle}'s view; local to one JVM. Answered
 * with the handle once its copy has finished. Anything larger than one slot of that memory is
 * split by the one pump ({@code ChunkedTransfer}) before it gets here, each piece a view of its own.
 */
public record TransferRequest(BufferHandle handle, ByteBuffer host, Direction direction) {

  /** Which way the bytes go; REGISTER only page-locks {@code host} for later transfers. */
  public enum Direction { TO_DEVICE, TO_HOST, REGISTER }

  /** A download reads the buffer; an upload (and a registration, which names none) writes it. */
  public Footprint footprint() {
    return direction == Direction.TO_HOST
      ? Footprint.builder().read(handle).build() : Footprint.builder().write(handle).build();
  }
}
