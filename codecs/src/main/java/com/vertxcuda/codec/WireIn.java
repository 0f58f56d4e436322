package com.vertxcuda.codec;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import io.vertx.core.buffer.Buffer;

import java.nio.charset.StandardCharsets;

/**
 * Reads the binary wire form of a message from a region of a {@link Buffer}. Every read checks its
 * bounds, so malformed bytes give a {@link WireFormatException} naming the type and position.
 */
public final class WireIn {

  private final Buffer buffer;
  private final String type;
  // The last string read, and its bytes packed into words: node ids repeat in every handle of a
  // message (a batch of small GEMMs carries thousands), so the same bytes again give the same string,
  // not a new one.
  private long[] lastWords;
  private int lastLength = -1;
  private String lastString;
  /** Longer strings (a kernel's source, a message) are not kept. */
  private static final int MEMO_LIMIT = 256;
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
    if (len == lastLength && sameWords(at, len, lastWords, 0)) {
      return lastString;
    }
    byte[] bytes = buffer.getBytes(at, at + len);
    String s = new String(bytes, StandardCharsets.UTF_8);
    if (len <= MEMO_LIMIT) {
      lastWords = words(bytes);
      lastLength = len;
      lastString = s;
    }
    return s;
  }

  /**
   * {@code bytes} as big-endian words of 8, the last one zero-padded: compared with the wire's bytes
   * a word at a time ({@link #sameWords}), not copied out and compared byte by byte. On the H100 host
   * the copy-and-compare took 40 % of a device host's link reader, the stage that bounds small GEMMs
   * in process isolation (1,024 a message: nine names and three node ids per GEMM).
   */
  static long[] words(byte[] bytes) {
    long[] w = new long[(bytes.length + 7) / 8];
    for (int i = 0; i < bytes.length; i++) {
      w[i / 8] |= (bytes[i] & 0xFFL) << (8 * (7 - i % 8));
    }
    return w;
  }

  // Whether the len bytes at {@code at} (bounds already taken) are those {@code words} pack, from
  // its word {@code from} on (the bytes before {@code at} matched the words before it).
  private boolean sameWords(int at, int len, long[] words, int from) {
    int full = len / 8;
    for (int i = 0; i < full; i++) {
      if (buffer.getLong(at + 8 * i) != words[from + i]) {
        return false;
      }
    }
    return len % 8 == 0 || word(at + 8 * full, len % 8) == words[from + full];
  }

  // The n (0..8) bytes at {@code at} as a big-endian word, zero-padded: one read of 8 bytes, masked,
  // where the message holds 8 from there (almost always: more fields follow), else byte by byte.
  private long word(int at, int n) {
    if (n == 0) {
      return 0;
    }
    if (at + 8 <= end) {
      long v = buffer.getLong(at);
      return n == 8 ? v : v & (-1L << (8 * (8 - n)));
    }
    long v = 0;
    for (int i = 0; i < n; i++) {
      v |= (buffer.getByte(at + i) & 0xFFL) << (8 * (7 - i));
    }
    return v;
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
    int[] lengths = known.lengths();
    long[] heads = known.heads();
    // The first word read once and compared with each name's (a name of 8 bytes or fewer is decided there).
    long head = word(at, Math.min(len, 8));
    for (int i = 0; i < lengths.length; i++) {
      if (lengths[i] == len && heads[i] == head && (len <= 8 || sameWords(at + 8, len - 8, known.words()[i], 1))) {
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
