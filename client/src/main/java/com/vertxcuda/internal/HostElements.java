package com.vertxcuda.internal;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * Java values on the host — an array, or the remaining elements of an NIO buffer — and the one place
 * that decides which device buffers they fit and moves them to and from the device's little-endian
 * bytes, in bulk (NIO views, never a loop per element).
 *
 * <p>Which Java type fits which dtype: {@code float} F32 and C64, {@code double} F64 and C128 (a
 * complex element takes two values, real then imaginary), {@code int} I32 and U32, {@code long} I64
 * and U64, {@code short} the bits of F16 and BF16; a {@code ByteBuffer} holds any dtype's raw bytes.
 * The values must fill the handle exactly.
 */
public final class HostElements {

  /** The most elements a Java array holds (what the JDK allocates safely). */
  static final long MAX_ARRAY = Integer.MAX_VALUE - 8;

  /** An element type of Java's, with the dtypes it fits and its bulk copies to and from device bytes. */
  private enum Kind {
    BYTE("byte", 1, EnumSet.allOf(DType.class),
      (from, le) -> le.put((ByteBuffer) from), (le, to) -> ((ByteBuffer) to).put(le)),
    SHORT("short", 2, EnumSet.of(DType.F16, DType.BF16),
      (from, le) -> le.asShortBuffer().put((ShortBuffer) from), (le, to) -> ((ShortBuffer) to).put(le.asShortBuffer())),
    INT("int", 4, EnumSet.of(DType.I32, DType.U32),
      (from, le) -> le.asIntBuffer().put((IntBuffer) from), (le, to) -> ((IntBuffer) to).put(le.asIntBuffer())),
    LONG("long", 8, EnumSet.of(DType.I64, DType.U64),
      (from, le) -> le.asLongBuffer().put((LongBuffer) from), (le, to) -> ((LongBuffer) to).put(le.asLongBuffer())),
    FLOAT("float", 4, EnumSet.of(DType.F32, DType.C64),
      (from, le) -> le.asFloatBuffer().put((FloatBuffer) from), (le, to) -> ((FloatBuffer) to).put(le.asFloatBuffer())),
    DOUBLE("double", 8, EnumSet.of(DType.F64, DType.C128),
      (from, le) -> le.asDoubleBuffer().put((DoubleBuffer) from), (le, to) -> ((DoubleBuffer) to).put(le.asDoubleBuffer()));

    final String javaName;
    final int size;
    final Set<DType> dtypes;
    final BiConsumer<Buffer, ByteBuffer> toDevice;
    final BiConsumer<ByteBuffer, Buffer> fromDevice;

    Kind(String javaName, int size, Set<DType> dtypes, BiConsumer<Buffer, ByteBuffer> toDevice,
         BiConsumer<ByteBuffer, Buffer> fromDevice) {
      this.javaName = javaName;
      this.size = size;
      this.dtypes = dtypes;
      this.toDevice = toDevice;
      this.fromDevice = fromDevice;
    }

    static Kind of(Buffer b) {
      if (b instanceof FloatBuffer) return FLOAT;
      if (b instanceof DoubleBuffer) return DOUBLE;
      if (b instanceof IntBuffer) return INT;
      if (b instanceof LongBuffer) return LONG;
      if (b instanceof ShortBuffer) return SHORT;
      if (b instanceof ByteBuffer) return BYTE;
      return null;
    }
  }

  private final Kind kind;
  /**
   * The elements: a duplicate, so the caller's position and limit are never moved; for a download's
   * new array, made on first use (on a copy thread, never the caller's: see {@link #arrayFor}).
   */
  private Buffer elements;
  private final IntFunction<Buffer> make;
  /** Bytes that arrived from a stream (a bulk upload's pieces, possibly many): read through Netty, never merged. */
  private final ByteBuf received;
  /**
   * A download's heap bytes in arrays of {@link #SEGMENT} bytes ({@link #segmented}, or a
   * {@link #landing} that got no lent memory), each made by the first copy thread that reads into it;
   * null otherwise.
   */
  private final AtomicReferenceArray<byte[]> segments;
  /** One lock per segment: the copies that touch a segment wait for the one making it, and only for it. */
  private final Object[] made;
  private final int length;
  private final String what;

  private HostElements(Kind kind, Buffer elements, String what) {
    this.kind = kind;
    this.elements = elements;
    this.make = null;
    this.received = null;
    this.segments = null;
    this.made = null;
    this.length = elements.remaining();
    this.what = what;
  }

  private HostElements(Kind kind, int length, IntFunction<Buffer> make, String what) {
    this.kind = kind;
    this.make = make;
    this.received = null;
    this.segments = null;
    this.made = null;
    this.length = length;
    this.what = what;
  }

  private HostElements(ByteBuf received) {
    this.kind = Kind.BYTE;
    this.make = null;
    this.received = received;
    this.segments = null;
    this.made = null;
    this.length = received.readableBytes();
    this.what = "stream of bytes";
  }

  /** Whether {@link #make} has run (a landing's may give nothing: its bytes then go to {@link #segments}). */
  private boolean madeOnce;

  // The elements, made now if they are a download's new array or a landing; null where a landing got none.
  private synchronized Buffer elements() {
    if (elements == null && !madeOnce) {
      madeOnce = true;
      elements = make.apply(length);
    }
    return elements;
  }

  public static HostElements of(float[] a) {
    return array(a == null ? null : FloatBuffer.wrap(a), "float[]");
  }

  public static HostElements of(double[] a) {
    return array(a == null ? null : DoubleBuffer.wrap(a), "double[]");
  }

  public static HostElements of(int[] a) {
    return array(a == null ? null : IntBuffer.wrap(a), "int[]");
  }

  public static HostElements of(long[] a) {
    return array(a == null ? null : LongBuffer.wrap(a), "long[]");
  }

  public static HostElements of(short[] a) {
    return array(a == null ? null : ShortBuffer.wrap(a), "short[]");
  }

  /**
   * The remaining elements of {@code b} (position to limit); {@code forWriting} when downloads land
   * there (a read-only buffer is refused).
   *
   * @throws CudaException BAD_REQUEST for a missing, read-only (to write) or unsupported buffer
   */
  public static HostElements of(Buffer b, boolean forWriting) {
    if (b == null) {
      throw new CudaException(FailureCode.BAD_REQUEST, "the host buffer is null");
    }
    Kind kind = Kind.of(b);
    if (kind == null) {
      throw new CudaException(FailureCode.BAD_REQUEST, "a " + b.getClass().getSimpleName() + " holds no dtype's "
        + "elements: use a ByteBuffer, ShortBuffer, IntBuffer, LongBuffer, FloatBuffer or DoubleBuffer");
    }
    if (forWriting && b.isReadOnly()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "the target " + kind.javaName + " buffer is read-only");
    }
    return new HostElements(kind, b.duplicate(), kind.javaName + " buffer");
  }

  /**
   * The bytes of {@code data} (a Vert.x Buffer) for an upload to a device in this JVM: read in place
   * when it is one piece, else piece by piece ({@link #received}), never merged first.
   */
  public static HostElements ofBuffer(io.vertx.core.buffer.Buffer data) {
    io.netty.buffer.ByteBuf b = VertxInternals.byteBuf(data);
    return b.nioBufferCount() > 1 ? received(data) : of(b.nioBuffer(0, data.length()), false);
  }

  /**
   * The bytes of {@code received} (a Vert.x Buffer, possibly over many pieces that arrived from a
   * stream): copied out with bulk gets piece by piece, never gathered into one array first.
   */
  public static HostElements received(io.vertx.core.buffer.Buffer received) {
    return new HostElements(VertxInternals.byteBuf(received));
  }

  private static HostElements array(Buffer wrapped, String what) {
    if (wrapped == null) {
      throw new CudaException(FailureCode.BAD_REQUEST, "the " + what + " is null");
    }
    return new HostElements(Kind.of(wrapped), wrapped, what);
  }

  /** A new array of {@code handle}'s length for a download, typed by {@code array}'s Java type. */
  public static HostElements arrayFor(BufferHandle handle, Class<?> array) {
    checkHandle(handle);
    int per = handle.dtype().components();
    if (handle.length() > MAX_ARRAY / per) {
      throw new CudaException(FailureCode.BAD_REQUEST, "the handle names " + handle.length() + " " + handle.dtype()
        + " elements; a Java array holds at most " + MAX_ARRAY + " values: download views of it");
    }
    // The dtype is checked before a large array is made for nothing.
    HostElements empty = array == float[].class ? of(new float[0]) : array == double[].class ? of(new double[0])
      : array == int[].class ? of(new int[0]) : array == long[].class ? of(new long[0]) : of(new short[0]);
    empty.checkDtype(handle.dtype());
    int n = (int) Math.max(0, handle.length() * per);
    // Made when the first chunk is read (a large array is zeroed by the JVM: not on the caller's thread).
    switch (empty.kind) {
      case FLOAT: return new HostElements(Kind.FLOAT, n, k -> FloatBuffer.wrap(new float[k]), "float[]");
      case DOUBLE: return new HostElements(Kind.DOUBLE, n, k -> DoubleBuffer.wrap(new double[k]), "double[]");
      case INT: return new HostElements(Kind.INT, n, k -> IntBuffer.wrap(new int[k]), "int[]");
      case LONG: return new HostElements(Kind.LONG, n, k -> LongBuffer.wrap(new long[k]), "long[]");
      default: return new HostElements(Kind.SHORT, n, k -> ShortBuffer.wrap(new short[k]), "short[]");
    }
  }

  /** A new byte array of {@code bytes} for a download, made on first use as {@link #arrayFor}'s are. */
  static HostElements bytesFor(int bytes) {
    return new HostElements(Kind.BYTE, bytes, k -> ByteBuffer.wrap(new byte[k]), "byte[]");
  }

  /**
   * {@code bytes} new host bytes for a download, in the memory {@code lent} gives when the first chunk
   * is read into them (on a copy thread: fresh memory is zeroed, which must not happen on the caller's
   * thread or an event loop); where it gives none (null), in heap arrays as {@link #segmented} makes
   * them, which {@link #landed} then wraps. Whichever it is is decided once, by the first chunk.
   */
  public static HostElements landing(int bytes, IntFunction<ByteBuffer> lent) {
    return new HostElements(bytes, lent);
  }

  /**
   * Bytes of one array of a {@link #segmented} download: 32 MiB less room for the array's header. G1's
   * heap regions are a power of two from 1 to 32 MiB, so such an array fills whole regions exactly
   * whatever the heap's size (an array of exactly a region's size, with its header, would take two).
   */
  static final int SEGMENT = (32 << 20) - 64;

  /**
   * {@code bytes} new heap bytes for a download, in arrays of {@link #SEGMENT} bytes (about 32 MiB), each made by
   * the copy thread that first reads into it; {@link #landed} wraps them as one Buffer once all is in.
   * Why not one array: the JVM zeroes a new array on the thread that makes it, before the first byte
   * lands, which for a GiB is a sizeable part of a remote download's time; segments are zeroed on the
   * copy threads as the stream arrives, overlapping it.
   */
  public static HostElements segmented(int bytes) {
    return new HostElements(bytes, null);
  }

  // Segments of bytes, made as they are read into; with lent, only where it gives no memory.
  private HostElements(int bytes, IntFunction<ByteBuffer> lent) {
    this.kind = Kind.BYTE;
    this.make = lent == null ? null : lent::apply;
    this.received = null;
    this.length = bytes;
    this.what = "host buffer";
    this.segments = new AtomicReferenceArray<>((int) ((bytes + (long) SEGMENT - 1) / SEGMENT));
    this.made = new Object[segments.length()];
    Arrays.setAll(made, i -> new Object());
  }

  /**
   * A {@link #segmented} download's bytes, or a {@link #landing}'s that got no lent memory, as one
   * Buffer (a composite of its arrays, none copied; each array made on a copy thread as bytes landed).
   */
  public io.vertx.core.buffer.Buffer landed() {
    int n = segments.length();
    if (n == 1) {
      return VertxInternals.buffer(Unpooled.wrappedBuffer(segment(0)));
    }
    byte[][] arrays = new byte[n][];
    for (int i = 0; i < n; i++) {
      arrays[i] = segment(i);
    }
    // One component per array, never consolidated (a composite merges past its component limit).
    return VertxInternals.buffer(Unpooled.wrappedBuffer(n, arrays));
  }

  // Segment i, made now by the first copy that touches it; the copies that touch it meanwhile wait for
  // that one (several frames land in one segment: each making its own would zero 32 MiB for nothing),
  // those of other segments do not.
  private byte[] segment(int i) {
    byte[] s = segments.get(i);
    if (s != null) {
      return s;
    }
    synchronized (made[i]) {
      s = segments.get(i);
      if (s == null) {
        s = new byte[(int) Math.min(SEGMENT, length - (long) i * SEGMENT)];
        segments.set(i, s);
      }
      return s;
    }
  }

  // Bytes [from, from + n) of a segmented download, from le's position, split at the segments' edges.
  private void readSegments(ByteBuffer le, long from, int n) {
    ByteBuffer src = le.duplicate();
    long at = from;
    int left = n;
    while (left > 0) {
      int i = (int) (at / SEGMENT);
      int off = (int) (at - (long) i * SEGMENT);
      int k = Math.min(left, SEGMENT - off);
      src.get(segment(i), off, k);
      at += k;
      left -= k;
    }
    le.position(le.position() + n);
  }

  /** The array these elements are (for one made by {@link #arrayFor} or {@link #bytesFor}). */
  public Object array() {
    return elements().array();
  }

  /**
   * Checks that these elements fill {@code handle} exactly: a dtype they hold and as many elements
   * as it names.
   *
   * @throws CudaException BAD_REQUEST naming the mismatch
   */
  void checkFits(BufferHandle handle) {
    checkHandle(handle);
    DType dtype = handle.dtype();
    checkDtype(dtype);
    int per = perDeviceElement(dtype);
    long count = Math.multiplyExact(Math.max(0, handle.length()), (long) per);
    if (length != count || handle.length() < 0) {
      throw new CudaException(FailureCode.BAD_REQUEST, "the " + what + " has " + length
        + (kind == Kind.BYTE ? " bytes" : " elements") + "; the handle names " + handle.length() + " " + dtype
        + " elements" + (per == 1 ? "" : " (" + count + (kind == Kind.BYTE ? " bytes)" : " values: real, imaginary pairs)")));
    }
  }

  private void checkDtype(DType dtype) {
    if (!kind.dtypes.contains(dtype)) {
      throw new CudaException(FailureCode.BAD_REQUEST, "a " + what + " holds " + names(kind.dtypes)
        + " elements; the handle's dtype is " + dtype);
    }
  }

  /** Host values per device element of {@code dtype}: its bytes for a ByteBuffer, two for a complex dtype. */
  int perDeviceElement(DType dtype) {
    return kind == Kind.BYTE ? dtype.size() : dtype.components();
  }

  /** Puts host values [{@code from}, {@code from + n}) into {@code le} at its position, in bulk. */
  void write(long from, int n, ByteBuffer le) {
    if (received != null) {
      ByteBuffer into = le.duplicate();
      into.limit(into.position() + n);
      received.getBytes(received.readerIndex() + Math.toIntExact(from), into);
      le.position(le.position() + n);
      return;
    }
    kind.toDevice.accept(slice(from, n), le.order(ByteOrder.LITTLE_ENDIAN));
  }

  /**
   * As {@link #write(long, int, ByteBuffer)}, with the copy spread over the copy threads
   * ({@link CopyThreads#spread}); {@code le} is not moved. {@code done} runs once, with the first
   * failure or null, when no piece is copying any more.
   */
  void write(long from, int n, ByteBuffer le, Consumer<Throwable> done) {
    int at = le.position();
    CopyThreads.spread(n, kind.size, (o, k) -> write(from + o, k, le.slice(at + o * kind.size, k * kind.size)), done);
  }

  /** Takes host values [{@code from}, {@code from + n}) from {@code le} at its position, in bulk. */
  void read(ByteBuffer le, long from, int n) {
    checkRead(le, n);
    if (inSegments()) {
      readSegments(le, from, n);
      return;
    }
    kind.fromDevice.accept(le.order(ByteOrder.LITTLE_ENDIAN), slice(from, n));
  }

  /**
   * As {@link #read(ByteBuffer, long, int)}, with the copy spread over the copy threads
   * ({@link CopyThreads#spread}): {@code done} runs once, with the first failure (a reply of the
   * wrong size among them) or null, when no piece is copying any more.
   */
  void read(ByteBuffer le, long from, int n, Consumer<Throwable> done) {
    try {
      checkRead(le, n);
    } catch (RuntimeException e) {
      done.accept(e);
      return;
    }
    int at = le.position();
    CopyThreads.spread(n, kind.size, (o, k) -> read(le.slice(at + o * kind.size, k * kind.size), from + o, k), done);
  }

  private void checkRead(ByteBuffer le, int n) {
    if (le.remaining() != (long) n * kind.size) {
      throw new IllegalStateException("the device sent " + le.remaining() + " bytes for " + n + " " + kind.javaName
        + " values");
    }
  }

  // Whether bytes land in segments: a segmented download's, or a landing's that got no lent memory.
  private boolean inSegments() {
    return segments != null && (make == null || elements() == null);
  }

  /** Bytes of one host value. */
  int valueBytes() {
    return kind.size;
  }

  private Buffer slice(long from, int n) {
    if (received != null) {
      throw new IllegalStateException("bytes that arrived from a stream are read only through write");
    }
    if (inSegments()) {
      throw new IllegalStateException("a segmented download's bytes are written only through read");
    }
    Buffer e = elements();
    return e.slice(e.position() + Math.toIntExact(from), n);
  }

  private static void checkHandle(BufferHandle handle) {
    if (handle == null) {
      throw new CudaException(FailureCode.BAD_REQUEST, "handle is null");
    }
  }

  private static String names(Set<DType> dtypes) {
    return dtypes.size() == DType.values().length ? "any dtype's" : String.join(" or ",
      dtypes.stream().map(Enum::name).toArray(String[]::new));
  }
}
