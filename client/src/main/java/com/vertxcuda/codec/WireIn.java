package com.vertxcuda.codec;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import io.netty.buffer.ByteBuf;
import io.vertx.core.buffer.Buffer;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Reads the binary wire form of a message from a region of a {@link Buffer}. Every read checks its
 * bounds, so malformed bytes give a {@link WireFormatException} naming the type and position.
 */
public final class WireIn {

  private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  private final Buffer buffer;
  private final String type;
  /**
   * The bytes read, as an array: the buffer's own where it is on the heap (as a frame or a message
   * that arrived is), else a copy of the region made once. Values are read from it directly, with one
   * bounds check of this reader's and none of Netty's: a batch frame carries dozens of values per
   * request, and reading each through the buffer's layers costs markedly more.
   */
  private final byte[] bytes;
  /** Where position {@code p} of the buffer is in {@link #bytes}: {@code base + p}. */
  private final int base;
  // The last string read, and where its bytes are: node ids repeat in every handle of a message (a
  // batch of small GEMMs carries thousands), so the same bytes again give the same string, not a new one.
  private int lastAt = -1;
  private int lastLength;
  private String lastString;
  /** Longer strings (a kernel's source, a message) are not kept. */
  private static final int MEMO_LIMIT = 256;
  /** The enum types this reader has read, and their names (made at the first enum read: most messages read none). */
  private WireEnums.Cache enums;
  /** The handles read in full so far, by their index on the wire (later ones may name them again). */
  private BufferHandle[] handles;
  private int handleCount;
  private final int end;
  private int pos;

  public WireIn(Buffer buffer, int pos, int end, String type) {
    this.buffer = buffer;
    this.pos = pos;
    // Never past the buffer's bytes: the array behind it may hold more (a reused buffer's older bytes).
    this.end = Math.min(end, buffer.length());
    this.type = type;
    ByteBuf buf = WireBuffers.backing(buffer);
    if (buf != null && buf.hasArray()) {
      this.bytes = buf.array();
      this.base = buf.arrayOffset();
    } else {
      // Direct or composite memory: the region, once (its bounds are the caller's, checked as any read's).
      int from = Math.max(0, Math.min(pos, this.end));
      this.bytes = buffer.getBytes(from, Math.max(from, this.end));
      this.base = -from;
    }
  }

  private int take(int n) {
    // Compared as a difference, so a length near Integer.MAX_VALUE cannot overflow past the check.
    if (n < 0 || n > end - pos) {
      throw new WireFormatException("malformed " + type + " on the wire: needs " + n + " bytes at "
        + pos + " but the message ends at " + end);
    }
    int at = pos;
    pos += n;
    return base + at;
  }

  public byte readByte() { return bytes[take(1)]; }

  public boolean readBoolean() {
    byte b = readByte();
    if (b != 0 && b != 1) {
      throw new WireFormatException("malformed " + type + " on the wire: bad boolean " + b);
    }
    return b == 1;
  }

  public int readInt() { return (int) INT.get(bytes, take(4)); }
  public long readLong() { return (long) LONG.get(bytes, take(8)); }
  public double readDouble() { return Double.longBitsToDouble(readLong()); }

  public String readString() {
    int len = readLength();
    if (len == -1) {
      return null;
    }
    int at = take(len);
    if (lastAt >= 0 && lastLength == len && Arrays.equals(bytes, at, at + len, bytes, lastAt, lastAt + len)) {
      return lastString;
    }
    String s = new String(bytes, at, len, StandardCharsets.UTF_8);
    if (len <= MEMO_LIMIT) {
      lastAt = at;
      lastLength = len;
      lastString = s;
    }
    return s;
  }

  public Buffer readBuffer() {
    int len = readLength();
    if (len == -1) {
      return null;
    }
    int at = take(len) - base;
    return buffer.getBuffer(at, at + len);
  }

  // A length prefix: -1 (null) or 0..remaining(); anything else is malformed.
  private int readLength() {
    int len = readInt();
    if (len < -1 || len > end - pos) {
      throw new WireFormatException("malformed " + type + " on the wire: length " + len + " at " + (pos - 4)
        + " but " + (end - pos) + " bytes are left");
    }
    return len;
  }

  /**
   * Reads a count of entries that follow, each at least {@code minBytes} long, and checks it against
   * both {@code max} and the bytes left (so a forged count cannot make the reader allocate).
   */
  public int readCount(int max, int minBytes) {
    int n = readInt();
    if (n < 0 || n > max || (long) n * Math.max(1, minBytes) > end - pos) {
      throw new WireFormatException("malformed " + type + " on the wire: count " + n + " (at most " + max
        + ", " + (end - pos) + " bytes left)");
    }
    return n;
  }

  /** Reads an enum constant by name ({@link WireOut#writeEnum}): its bytes matched against the names, no string made. */
  public <E extends Enum<E>> E readEnum(Class<E> cls) {
    int len = readLength();
    if (len == -1) {
      return null;
    }
    int at = take(len);
    WireEnums.Table known = enums().get(cls);
    int i = known.find(bytes, at, len);
    if (i < 0) {
      throw new WireFormatException("malformed " + type + " on the wire: unknown " + cls.getSimpleName() + " '"
        + new String(bytes, at, len, StandardCharsets.UTF_8) + "'");
    }
    return cls.cast(known.constants[i]);
  }

  private WireEnums.Cache enums() {
    if (enums == null) {
      enums = new WireEnums.Cache();
    }
    return enums;
  }

  /** Reads a handle as {@link WireOut#writeHandle} wrote it: null, in full, or one read earlier in this message. */
  public BufferHandle readHandle() {
    byte tag = readByte();
    if (tag == WireOut.HANDLE_NULL) {
      return null;
    }
    if (tag == WireOut.HANDLE_EARLIER) {
      int index = readInt();
      if (index < 0 || index >= handleCount) {
        throw new WireFormatException("malformed " + type + " on the wire: handle " + index + " of the "
          + handleCount + " read so far");
      }
      return handles[index];
    }
    if (tag != WireOut.HANDLE_FULL) {
      throw new WireFormatException("malformed " + type + " on the wire: bad handle tag " + tag);
    }
    String node = readString();
    int device = readInt();
    long generation = readLong();
    long id = readLong();
    DType dtype = readEnum(DType.class);
    long count = readLong();
    long hi = readLong();
    long lo = readLong();
    long offset = readLong();
    long length = readLong();
    if (node == null || dtype == null) {
      throw new WireFormatException("malformed " + type + " on the wire: handle without node or dtype");
    }
    BufferHandle h = new BufferHandle(node, device, generation, id, dtype, count, hi, lo, offset, length);
    if (handles == null) {
      handles = new BufferHandle[4];
    } else if (handleCount == handles.length) {
      handles = Arrays.copyOf(handles, handleCount * 2);
    }
    handles[handleCount++] = h;
    return h;
  }

  /** Bytes left in the message. */
  public int remaining() {
    return end - pos;
  }

  /** Fails unless every byte of the message was read. */
  public void expectEnd() {
    if (pos != end) {
      throw new WireFormatException("malformed " + type + " on the wire: " + (end - pos) + " trailing bytes");
    }
  }
}
