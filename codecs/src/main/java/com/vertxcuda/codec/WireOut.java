package com.vertxcuda.codec;

import com.vertxcuda.BufferHandle;
import io.vertx.core.buffer.Buffer;

import java.nio.charset.StandardCharsets;

/** Writes the binary wire form of a message into a {@link Buffer}. Nulls are written explicitly. */
public final class WireOut {

  private final Buffer buffer;
  // The last string written, and its bytes: node ids repeat in every handle of a message.
  private String lastString;
  private byte[] lastBytes;

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
    byte[] bytes;
    if (s.equals(lastString)) {
      bytes = lastBytes;
    } else {
      bytes = s.getBytes(StandardCharsets.UTF_8);
      lastString = s;
      lastBytes = bytes;
    }
    return writeBytes(bytes);
  }

  private WireOut writeBytes(byte[] bytes) {
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
    return e == null ? writeInt(-1) : writeBytes(enumNames(e.getDeclaringClass()).names()[e.ordinal()]);
  }

  /** An enum's constants and their UTF-8 names, by ordinal, made once per enum (shared: never written to). */
  record EnumNames(Object[] constants, byte[][] names) {
  }

  static EnumNames enumNames(Class<?> cls) {
    return ENUM_NAMES.get(cls);
  }

  private static final ClassValue<EnumNames> ENUM_NAMES = new ClassValue<>() {
    @Override
    protected EnumNames computeValue(Class<?> type) {
      Object[] constants = type.getEnumConstants();
      byte[][] names = new byte[constants.length][];
      for (int i = 0; i < constants.length; i++) {
        names[i] = ((Enum<?>) constants[i]).name().getBytes(StandardCharsets.UTF_8);
      }
      return new EnumNames(constants, names);
    }
  };

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
