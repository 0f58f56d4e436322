package com.vertxcuda.device.context;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.device.spi.Footprint;

import java.nio.ByteBuffer;

/**
 * An upload from, or a download into, host memory the sender owns (the device host's mapping of
 * the shared region) of exactly the bytes of {@code handle}'s view; local to one JVM. Answered
 * with the handle once its copy has finished. Anything larger than one slot of that memory is
 * split by the one pump ({@code ChunkedTransfer}) before it gets here, each piece a view of its own.
 *
 * <p>That memory may be page-locked in pieces of {@code piece} bytes, the first starting {@code at}
 * bytes before {@code host}'s first byte modulo {@code piece} (the device host pins its region as
 * it is used): the copy is then split where a piece ends, because one copy whose host range spans
 * two registrations fails with CUDA_ERROR_INVALID_VALUE. {@code piece} 0: one piece.
 */
public record TransferRequest(BufferHandle handle, ByteBuffer host, Direction direction, long at, long piece) {

  /** Which way the bytes go; REGISTER only page-locks {@code host} for later transfers. */
  public enum Direction { TO_DEVICE, TO_HOST, REGISTER }

  /** Memory page-locked (if at all) in one piece. */
  public TransferRequest(BufferHandle handle, ByteBuffer host, Direction direction) {
    this(handle, host, direction, 0, 0);
  }

  /** Bytes from {@code from} (relative to {@code host}) to the end of the piece it lies in, at most {@code left}. */
  public long pieceFrom(long from, long left) {
    return piece <= 0 ? left : Math.min(left, piece - Math.floorMod(at + from, piece));
  }

  /** A download reads the buffer; an upload (and a registration, which names none) writes it. */
  public Footprint footprint() {
    return direction == Direction.TO_HOST
      ? Footprint.builder().read(handle).build() : Footprint.builder().write(handle).build();
  }
}
