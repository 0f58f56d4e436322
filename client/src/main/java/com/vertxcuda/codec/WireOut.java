package com.vertxcuda.codec;

import com.vertxcuda.BufferHandle;
import io.netty.buffer.ByteBuf;
import io.vertx.core.buffer.Buffer;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/** Writes the binary wire form of a message into a {@link Buffer}. Nulls are written explicitly. */
public final class WireOut {

  private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  private final Buffer buffer;
  /**
   * The heap Netty buffer under it, and that buffer's array: values are written into the array in
   * place. Through the buffer each value cost a check that the buffer is still referenced and a
   * growth check, a large share of the time to encode a batch frame. Null where
   * the Buffer may move to another Netty buffer, is off the heap, or is of another kind than Vert.x's
   * own ({@link InPlaceBuffers#appendable}): values are appended through the Buffer then.
   */
  private final ByteBuf buf;
  private byte[] array;
  private int arrayBase;
  /** The capacity {@link #array} was taken at: a buffer that grows (here or by another writer) moves to a new array. */
  private int arrayCapacity = -1;
  // The last string written, and its bytes: node ids repeat in every handle of a message.
  private String lastString;
  private byte[] lastBytes;
  /** The enum types this writer has written, and their names (made at the first enum written: most messages have none). */
  private WireEnums.Cache enums;
  /** The handles written in full so far, by their index on the wire (made at the first handle). */
  private WireHandles handles;

  public WireOut(Buffer buffer) {
    this.buffer = buffer;
    this.buf = WireBuffers.appendable(buffer);
  }

  // Appends n bytes' room and answers where in {@link #array} (current after the call) they start.
  private int reserve(int n) {
    ByteBuf b = buf;
    int at = b.writerIndex();
    if (b.capacity() - at < n) {
      b.ensureWritable(n);
    }
    if (b.capacity() != arrayCapacity) {
      array = b.array();
      arrayBase = b.arrayOffset();
      arrayCapacity = b.capacity();
    }
    b.writerIndex(at + n);
    return arrayBase + at;
  }

  public WireOut writeByte(int v) {
    if (buf == null) {
      buffer.appendByte((byte) v);
    } else {
      int at = reserve(1);
      array[at] = (byte) v;
    }
    return this;
  }

  public WireOut writeBoolean(boolean v) { return writeByte(v ? 1 : 0); }

  public WireOut writeInt(int v) {
    if (buf == null) {
      buffer.appendInt(v);
    } else {
      int at = reserve(4);
      INT.set(array, at, v);
    }
    return this;
  }

  public WireOut writeLong(long v) {
    if (buf == null) {
      buffer.appendLong(v);
    } else {
      int at = reserve(8);
      LONG.set(array, at, v);
    }
    return this;
  }

  public WireOut writeDouble(double v) { return writeLong(Double.doubleToRawLongBits(v)); }

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
    if (buf == null) {
      buffer.appendBytes(bytes);
    } else {
      int at = reserve(bytes.length);
      System.arraycopy(bytes, 0, array, at, bytes.length);
    }
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
    return e == null ? writeInt(-1) : writeBytes(enums().get(e.getDeclaringClass()).names[e.ordinal()]);
  }

  private WireEnums.Cache enums() {
    if (enums == null) {
      enums = new WireEnums.Cache();
    }
    return enums;
  }

  /**
   * Writes a handle: a tag byte (0 null, 1 the handle in full, 2 one this message already carries),
   * then its fields, or the index of the earlier one among the handles written in full. A batch names
   * the same few buffers again and again (two of a small GEMM's three operands are usually shared by
   * the whole batch): each is written once, about a hundred bytes, and in five bytes each time after.
   */
  public WireOut writeHandle(BufferHandle h) {
    if (h == null) {
      return writeByte(HANDLE_NULL);
    }
    if (handles == null) {
      handles = new WireHandles();
    } else {
      int earlier = handles.indexOf(h);
      if (earlier >= 0) {
        return writeByte(HANDLE_EARLIER).writeInt(earlier);
      }
    }
    handles.add(h);
    return writeByte(HANDLE_FULL).writeString(h.node()).writeInt(h.device()).writeLong(h.generation()).writeLong(h.id())
      .writeEnum(h.dtype()).writeLong(h.count()).writeLong(h.tokenHigh()).writeLong(h.tokenLow())
      .writeLong(h.offset()).writeLong(h.length());
  }

  static final int HANDLE_NULL = 0;
  static final int HANDLE_FULL = 1;
  static final int HANDLE_EARLIER = 2;
}
