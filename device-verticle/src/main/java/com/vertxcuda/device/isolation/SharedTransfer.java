package com.vertxcuda.device.isolation;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.codec.WireType;

/**
 * An upload or download whose bytes sit in the shared region at {@code offset}: what crosses the
 * link instead of the bytes themselves. A transfer larger than a slot goes in chunks: each names
 * the whole transfer's {@code handle}, where in it the chunk starts ({@code from}, bytes), and the
 * request id of the transfer's first chunk ({@code transfer}, 0 for a transfer in one piece).
 */
public final class SharedTransfer {

  static final WireType<SharedTransfer> WIRE = WireType.of(SharedTransfer.class, 2,
    (t, out) -> out.writeHandle(t.handle).writeLong(t.offset).writeLong(t.length).writeBoolean(t.toDevice)
      .writeLong(t.transfer).writeLong(t.from),
    in -> new SharedTransfer(in.readHandle(), in.readLong(), in.readLong(), in.readBoolean(), in.readLong(),
      in.readLong()));

  final BufferHandle handle;
  final long offset;
  final long length;
  final boolean toDevice;
  final long transfer;
  final long from;

  SharedTransfer(BufferHandle handle, long offset, long length, boolean toDevice, long transfer, long from) {
    this.handle = handle;
    this.offset = offset;
    this.length = length;
    this.toDevice = toDevice;
    this.transfer = transfer;
    this.from = from;
  }

  /** Whether this chunk continues a transfer whose first chunk already took its place in the order. */
  boolean continues() {
    return transfer != 0 && from != 0;
  }

  /** Whether this chunk ends its transfer. */
  boolean last() {
    return from + length >= handle.byteLength();
  }
}
