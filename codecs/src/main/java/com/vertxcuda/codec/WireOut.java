package com.vertxcuda.codec;

import com.vertxcuda.BufferHandle;
import io.vertx.core.buffer.Buffer;

import java.nio.charset.StandardCharsets;

/** Writes the binary wire form of a message into a {@link Buffer}. Nulls are written explicitly. */
public final class WireOut {

  private final Buffer buffer;

  public WireOut(Buffer buffer) {
    this.buffer = buffer;
  }

  public WireOut writeByte(int v) { buffer.appendByte((byte) v); return this; }
  public WireOut writeBoolean(boolean v) { return writeByte(v ? 1 : 0); }
  public WireOut writeInt(int v) { buffer.appendInt(v); return this; }
  public WireOut writeLong(long v) { buffer.appendLong(v); return this; }
  public WireOut writeDouble(double v) { buffer.appendDouble(v); return this; }

  public WireOut writeString(String s) {
    if (s == null) {
      return writeInt(-1);
    }
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    writeInt(bytes.length);
    buffer.appendBytes(bytes);
    return this;
  }

  public WireOut writeBuffer(Buffer b) {
    if (b == null) {
      return writeInt(-1);
    }
    writeInt(b.length());
    buffer.appendBuffer(b);
    return this;
  }

  /** Writes an enum constant by name (stable across reorderings). */
  public WireOut writeEnum(Enum<?> e) {
    return writeString(e == null ? null : e.name());
  }

  public WireOut writeHandle(BufferHandle h) {
    writeBoolean(h != null);
    if (h != null) {
      writeString(h.node()).writeInt(h.device()).writeLong(h.generation()).writeLong(h.id())
        .writeEnum(h.dtype()).writeLong(h.count()).writeLong(h.tokenHigh()).writeLong(h.tokenLow())
        .writeLong(h.offset()).writeLong(h.length());
    }
    return this;
  }
}
