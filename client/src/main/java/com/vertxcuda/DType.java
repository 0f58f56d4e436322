package com.vertxcuda;

/**
 * Element types a device buffer can hold, with their sizes in bytes. C64 and C128 are complex
 * numbers: an F32 (F64) real part followed by the imaginary part, as cuFFT's and cuBLAS's complex
 * types lie in memory. They move (alloc, upload, download, copy) like any dtype; a single value
 * cannot make one ({@link #encode(double)} refuses them, so they take no fill and no kernel scalar).
 */
public enum DType {
  F32(4, true), F64(8, true), F16(2, true), BF16(2, true),
  I8(1, false), U8(1, false), I32(4, false), U32(4, false), I64(8, false), U64(8, false),
  C64(8, true), C128(16, true);

  private final int size;
  private final boolean floatingPoint;

  DType(int size, boolean floatingPoint) {
    this.size = size;
    this.floatingPoint = floatingPoint;
  }

  /** Bytes per element. */
  public int size() {
    return size;
  }

  /** Whether the elements are floating-point numbers, real or complex. */
  public boolean isFloatingPoint() {
    return floatingPoint;
  }

  /** Whether the elements are complex (C64, C128). */
  public boolean isComplex() {
    return this == C64 || this == C128;
  }

  /** The dtype of each part of an element: F32 for C64, F64 for C128, the dtype itself otherwise. */
  public DType component() {
    return this == C64 ? F32 : this == C128 ? F64 : this;
  }

  /** Parts per element: 2 for a complex dtype (real, imaginary), 1 otherwise. */
  public int components() {
    return isComplex() ? 2 : 1;
  }

  /** Bytes taken by {@code count} elements; throws on overflow. */
  public long bytes(long count) {
    return Math.multiplyExact(count, (long) size);
  }

  /** The largest integer magnitude a double holds exactly with all its neighbours (2^53). */
  public static final double MAX_EXACT_INTEGER = 0x1p53;

  /**
   * The bit pattern of one element holding {@code value}, in the low {@link #size()} bytes. This is
   * the one place that decides which values a dtype takes; fills and kernel scalars go through it.
   * <ul>
   *   <li>F64, F32, F16, BF16: NaN, the infinities and every finite value that stays finite once
   *   rounded to the dtype (to nearest); a finite value that would round to infinity is refused.</li>
   *   <li>Integer dtypes: integral values in the dtype's range only; NaN, the infinities and
   *   fractions are refused (no rounding, no saturation, no wrapping). I64 and U64 also refuse a
   *   magnitude above 2^53 ({@link #MAX_EXACT_INTEGER}): past it a double cannot tell neighbouring
   *   integers apart, so it may not be the value meant; give such values as a {@code long}
   *   ({@link #encode(long)}).</li>
   *   <li>C64, C128: nothing; one number does not make a complex element.</li>
   * </ul>
   *
   * @throws IllegalArgumentException naming the value and the dtype's range
   */
  public long encode(double value) {
    if (isComplex()) {
      throw notOneValue();
    }
    if (floatingPoint) {
      long bits = round(value);
      if (!Double.isInfinite(value) && Double.isInfinite(decode(bits))) {
        throw new IllegalArgumentException(value + " is out of range for " + name() + " (finite values are within "
          + range() + ")");
      }
      return bits;
    }
    if (Double.isNaN(value) || Double.isInfinite(value)) {
      throw new IllegalArgumentException(name() + " takes integral values in " + range() + ", not " + value);
    }
    if (value != Math.rint(value)) {
      throw new IllegalArgumentException(name() + " takes integral values in " + range() + ", not " + value);
    }
    if (Math.abs(value) > MAX_EXACT_INTEGER) {
      if (value < minimum() || value > maximum()) {
        throw new IllegalArgumentException(value + " is out of range for " + name() + " " + range());
      }
      throw new IllegalArgumentException(value + " is past 2^53, where a double is not exact; give " + name()
        + " values of that size as a long");
    }
    return encode((long) value);
  }

  /**
   * The bit pattern of one element holding the integer {@code value}; integers outside the dtype's
   * range are refused (a U64 takes 0..{@link Long#MAX_VALUE} this way). Floating-point dtypes take
   * the nearest value, under the same range rule as {@link #encode(double)}.
   *
   * @throws IllegalArgumentException naming the value and the dtype's range
   */
  public long encode(long value) {
    switch (this) {
      case I8: return checked(value, Byte.MIN_VALUE, Byte.MAX_VALUE) & 0xFFL;
      case U8: return checked(value, 0, 0xFF);
      case I32: return checked(value, Integer.MIN_VALUE, Integer.MAX_VALUE) & 0xFFFF_FFFFL;
      case U32: return checked(value, 0, 0xFFFF_FFFFL);
      case I64: return value;
      case U64: return checked(value, 0, Long.MAX_VALUE);
      default: return encode((double) value);
    }
  }

  /**
   * Checks that {@code bits} is one element's bit pattern: nothing set above the low {@link #size()}
   * bytes. The device checks the bits a fill or a kernel scalar carries with this.
   *
   * @throws IllegalArgumentException if higher bits are set, or for a complex dtype
   */
  public long checkBits(long bits) {
    if (isComplex()) {
      throw notOneValue();
    }
    if (size < 8 && (bits >>> (8 * size)) != 0) {
      throw new IllegalArgumentException("bits 0x" + Long.toHexString(bits) + " do not fit in one " + name()
        + " element (" + size + " bytes)");
    }
    return bits;
  }

  /** The dtype's range, as an error message names it: {@code [min, max]}. */
  public String range() {
    switch (this) {
      case F64: return "[-" + Double.MAX_VALUE + ", " + Double.MAX_VALUE + "]";
      case F32: return "[-" + Float.MAX_VALUE + ", " + Float.MAX_VALUE + "]";
      case F16: return "[-65504.0, 65504.0]";
      case BF16: return "[-" + HalfFloats.fromBfloat16((short) 0x7F7F) + ", " + HalfFloats.fromBfloat16((short) 0x7F7F) + "]";
      case I64: return "[" + Long.MIN_VALUE + ", " + Long.MAX_VALUE + "]";
      case U64: return "[0, 18446744073709551615]";
      case C64: case C128: return "real and imaginary parts each in " + component().range();
      default: return "[" + (long) minimum() + ", " + (long) maximum() + "]";
    }
  }

  private double minimum() {
    switch (this) {
      case I8: return Byte.MIN_VALUE;
      case I32: return Integer.MIN_VALUE;
      case I64: return -0x1p63;
      default: return 0;
    }
  }

  private double maximum() {
    switch (this) {
      case I8: return Byte.MAX_VALUE;
      case U8: return 0xFF;
      case I32: return Integer.MAX_VALUE;
      case U32: return 0xFFFF_FFFFL;
      case I64: return 0x1p63 - 1024; // the largest double below 2^63
      default: return 0x1p64 - 2048; // U64: the largest double below 2^64
    }
  }

  /**
   * For a floating-point dtype, the bit pattern of the value nearest {@code value} (to nearest
   * even), a finite value past the range becoming an infinity: what a conversion in a kernel does.
   * Unchecked; values a caller gives go through {@link #encode(double)}.
   *
   * @throws IllegalArgumentException for an integer dtype
   */
  public long round(double value) {
    switch (this) {
      case F32: return Float.floatToRawIntBits((float) value) & 0xFFFF_FFFFL;
      case F64: return Double.doubleToRawLongBits(value);
      case F16: return HalfFloats.toHalf((float) value) & 0xFFFFL;
      case BF16: return HalfFloats.toBfloat16((float) value) & 0xFFFFL;
      default: throw new IllegalArgumentException(name() + " is not a real floating-point dtype");
    }
  }

  /**
   * The value held by one element with bit pattern {@code bits}, as a double.
   *
   * @throws IllegalArgumentException for a complex dtype
   */
  public double decode(long bits) {
    switch (this) {
      case C64: case C128: throw notOneValue();
      case F32: return Float.intBitsToFloat((int) bits);
      case F64: return Double.longBitsToDouble(bits);
      case F16: return HalfFloats.fromHalf((short) bits);
      case BF16: return HalfFloats.fromBfloat16((short) bits);
      case I8: return (byte) bits;
      case U8: return bits & 0xFF;
      case I32: return (int) bits;
      case U32: return bits & 0xFFFF_FFFFL;
      case U64: return bits >= 0 ? bits : (double) (bits >>> 1) * 2.0;
      default: return bits;
    }
  }

  private IllegalArgumentException notOneValue() {
    return new IllegalArgumentException(name() + " elements are complex: one number does not make one (no fill, no "
      + "scalar); upload the values as " + component() + " real, imaginary pairs");
  }

  private long checked(long value, long min, long max) {
    if (value < min || value > max) {
      throw new IllegalArgumentException(value + " is out of range for " + name() + " " + range());
    }
    return value;
  }
}
