package com.vertxcuda;

/**
 * Element types a device buffer can hold, with their sizes in bytes.
 */
public enum DType {
  F32(4, true), F64(8, true), F16(2, true), BF16(2, true),
  I8(1, false), U8(1, false), I32(4, false), U32(4, false), I64(8, false), U64(8, false);

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

  public boolean isFloatingPoint() {
    return floatingPoint;
  }

  /** Bytes taken by {@code count} elements; throws on overflow. */
  public long bytes(long count) {
    return Math.multiplyExact(count, (long) size);
  }

  /**
   * The bit pattern of one element holding {@code value}, in the low {@link #size()} bytes.
   * Integer types take only integral values in their range.
   */
  public long encode(double value) {
    switch (this) {
      case F32: return Float.floatToRawIntBits((float) value) & 0xFFFF_FFFFL;
      case F64: return Double.doubleToRawLongBits(value);
      case F16: return HalfFloats.toHalf((float) value) & 0xFFFFL;
      case BF16: return HalfFloats.toBfloat16((float) value) & 0xFFFFL;
      default:
        if (value != Math.rint(value) || Double.isInfinite(value)) {
          throw new IllegalArgumentException(name() + " takes integral values, not " + value);
        }
        if (this == U64 && value >= 0x1p63) {
          return encode((long) (value - 0x1p63) ^ Long.MIN_VALUE);
        }
        return encode((long) value);
    }
  }

  /** The bit pattern of one element holding the integer {@code value}; checks the range. */
  public long encode(long value) {
    switch (this) {
      case I8: return checked(value, Byte.MIN_VALUE, Byte.MAX_VALUE) & 0xFFL;
      case U8: return checked(value, 0, 0xFF);
      case I32: return checked(value, Integer.MIN_VALUE, Integer.MAX_VALUE) & 0xFFFF_FFFFL;
      case U32: return checked(value, 0, 0xFFFF_FFFFL);
      case I64: case U64: return value;
      default: return encode((double) value);
    }
  }

  /** The value held by one element with bit pattern {@code bits}, as a double. */
  public double decode(long bits) {
    switch (this) {
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

  private long checked(long value, long min, long max) {
    if (value < min || value > max) {
      throw new IllegalArgumentException(value + " is out of range for " + name());
    }
    return value;
  }
}
