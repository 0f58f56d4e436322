package com.vertxcuda.device.isolation;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.codec.WireType;

/**
 * An upload or download whose bytes sit in the shared region at {@code offset}: what crosses the
 * link instead of the bytes themselves.
 */
final class SharedTransfer {

  static final WireType<SharedTransfer> WIRE = WireType.of(SharedTransfer.class, 1,
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
