package com.vertxcuda;

/** IEEE half and bfloat16 conversions (Java 17 has neither), round to nearest even. */
final class HalfFloats {

  private HalfFloats() {
  }

  static short toBfloat16(float f) {
    int bits = Float.floatToRawIntBits(f);
    if (Float.isNaN(f)) {
      return (short) ((bits >>> 16) | 0x40);
    }
    int rounding = 0x7FFF + ((bits >>> 16) & 1);
    return (short) ((bits + rounding) >>> 16);
  }

  static float fromBfloat16(short h) {
    return Float.intBitsToFloat((h & 0xFFFF) << 16);
  }

  static short toHalf(float f) {
    int bits = Float.floatToRawIntBits(f);
    int sign = (bits >>> 16) & 0x8000;
    int exp = (bits >>> 23) & 0xFF;
    int mant = bits & 0x7F_FFFF;
    if (exp == 0xFF) {
      return (short) (sign | 0x7C00 | (mant != 0 ? 0x200 : 0));
    }
    int e = exp - 127 + 15;
    if (e >= 0x1F) {
      return (short) (sign | 0x7C00);
    }
    if (e <= 0) {
      if (e < -10) {
        return (short) sign;
      }
      mant |= 0x80_0000;
      int shift = 14 - e;
      int half = mant >>> shift;
      int rem = mant & ((1 << shift) - 1);
      int mid = 1 << (shift - 1);
      if (rem > mid || (rem == mid && (half & 1) == 1)) {
        half++;
      }
      return (short) (sign | half);
    }
    int half = (e << 10) | (mant >>> 13);
    int rem = mant & 0x1FFF;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1) == 1)) {
      half++;
    }
    return (short) (sign | half);
  }

  static float fromHalf(short h) {
    int bits = h & 0xFFFF;
    int sign = (bits & 0x8000) << 16;
    int exp = (bits >>> 10) & 0x1F;
    int mant = bits & 0x3FF;
    if (exp == 0) {
      float v = mant * 0x1p-24f;
      return sign != 0 ? -v : v;
    }
    if (exp == 0x1F) {
      return Float.intBitsToFloat(sign | 0x7F80_0000 | (mant << 13));
    }
    return Float.intBitsToFloat(sign | ((exp - 15 + 127) << 23) | (mant << 13));
  }
}
