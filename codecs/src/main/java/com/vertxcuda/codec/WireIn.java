package com.vertxcuda.codec;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import io.vertx.core.buffer.Buffer;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Reads the binary wire form of a message from a region of a {@link Buffer}. Every read checks its
 * bounds, so malformed bytes give a {@link WireFormatException} naming the type and position.
 */
public final class WireIn {

  private final Buffer buffer;
  private final String type;
  // The last string read, and its bytes: node ids repeat in every handle of a message (a batch of
  // small GEMMs carries thousands), so the same bytes again give the same string, not a new one.
  private byte[] lastBytes;
  private String lastString;
  /** Longer strings (a kernel's source, a message) are not kept. */
  private static final int MEMO_LIMIT = 256;
  // The bytes at {@code scratchFor} (scratchLength of them), for comparing one value with several names.
  private byte[] scratch = new byte[64];
  private int scratchFor = -1;
  private int scratchLength;
  private final int end;
  private int pos;

  public WireIn(Buffer buffer, int pos, int end, String type) {
    this.buffer = buffer;
    this.pos = pos;
    this.end = end;
    this.type = type;
  }

  private int take(int n) {
    // Compared as a difference, so a length near Integer.MAX_VALUE cannot overflow past the check.
    if (n < 0 || n > end - pos) {
      throw new WireFormatException("malformed " + type + " on the wire: needs " + n + " bytes at "
        + pos + " but the message ends at " + end);
    }
    int at = pos;
    pos += n;
    return at;
  }

  public byte readByte() { return buffer.getByte(take(1)); }

  public boolean readBoolean() {
    byte b = readByte();
    if (b != 0 && b != 1) {
      throw new WireFormatException("malformed " + type + " on the wire: bad boolean " + b);
    }
    return b == 1;
  }

  public int readInt() { return buffer.getInt(take(4)); }
  public long readLong() { return buffer.getLong(take(8)); }
  public double readDouble() { return buffer.getDouble(take(8)); }

  public String readString() {
    int len = readLength();
    if (len == -1) {
      return null;
    }
    int at = take(len);
    byte[] last = lastBytes;
    if (last != null && last.length == len && sameBytes(at, last)) {
      return lastString;
    }
    byte[] bytes = buffer.getBytes(at, at + len);
    String s = new String(bytes, StandardCharsets.UTF_8);
    if (len <= MEMO_LIMIT) {
      lastBytes = bytes;
      lastString = s;
    }
    return s;
  }

  // Whether the bytes at {@code at} are {@code bytes} (bounds already taken): copied once into a
  // scratch array (one bounds check and an array copy, not one per byte), then compared there.
  private boolean sameBytes(int at, byte[] bytes) {
    int len = bytes.length;
    if (len == 0) {
      return true;
    }
    if (scratchFor != at || scratchLength != len) {
      if (scratch.length < len) {
        scratch = new byte[Math.max(len, 2 * scratch.length)];
      }
      buffer.getBytes(at, at + len, scratch, 0);
      scratchFor = at;
      scratchLength = len;
    }
    return Arrays.equals(scratch, 0, len, bytes, 0, len);
  }

  public Buffer readBuffer() {
    int len = readLength();
    if (len == -1) {
      return null;
    }
    int at = take(len);
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
    WireOut.EnumNames known = WireOut.enumNames(cls);
    byte[][] names = known.names();
    for (int i = 0; i < names.length; i++) {
      if (names[i].length == len && sameBytes(at, names[i])) {
        return cls.cast(known.constants()[i]);
      }
    }
    throw new WireFormatException("malformed " + type + " on the wire: unknown " + cls.getSimpleName() + " '"
      + new String(buffer.getBytes(at, at + len), StandardCharsets.UTF_8) + "'");
  }

  public BufferHandle readHandle() {
    if (!readBoolean()) {
      return null;
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
    return new BufferHandle(node, device, generation, id, dtype, count, hi, lo, offset, length);
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
