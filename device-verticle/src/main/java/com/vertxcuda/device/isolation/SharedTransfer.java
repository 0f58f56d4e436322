package com.vertxcuda.device.isolation;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.codec.WireType;

/**
 * An upload or download of {@code handle}'s view whose bytes sit in the shared region at
 * {@code offset}: what crosses the link instead of the bytes themselves. One slot, one view: a
 * transfer larger than a slot is split by the one pump ({@code ChunkedTransfer}) before it comes here.
 */
public final class SharedTransfer {

  static final WireType<SharedTransfer> WIRE = WireType.of(SharedTransfer.class, 2,
    (t, out) -> out.writeHandle(t.handle).writeLong(t.offset).writeLong(t.length).writeBoolean(t.toDevice),
    in -> new SharedTransfer(in.readHandle(), in.readLong(), in.readLong(), in.readBoolean()));

  final BufferHandle handle;
  final long offset;
  final long length;
  final boolean toDevice;

  SharedTransfer(BufferHandle handle, long offset, long length, boolean toDevice) {
    this.handle = handle;
    this.offset = offset;
    this.length = length;
    this.toDevice = toDevice;
  }
}
