package com.vertxcuda;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DTypeTest {

  @Test
  void sizes() {
    assertEquals(4, DType.F32.size());
    assertEquals(8, DType.F64.size());
    assertEquals(2, DType.F16.size());
    assertEquals(2, DType.BF16.size());
    assertEquals(1, DType.U8.size());
    assertEquals(8, DType.U64.size());
    assertEquals(4000, DType.I32.bytes(1000));
  }

  @Test
  void complexDtypesArePairsOfTheirComponentAndTakeNoSingleValue() {
    assertEquals(8, DType.C64.size());
    assertEquals(16, DType.C128.size());
    assertEquals(DType.F32, DType.C64.component());
    assertEquals(DType.F64, DType.C128.component());
    assertEquals(2, DType.C128.components());
    assertEquals(1, DType.F64.components());
    assertTrue(DType.C64.isComplex() && DType.C64.isFloatingPoint());
    for (DType t : new DType[] {DType.C64, DType.C128}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> t.encode(1.0));
      assertTrue(e.getMessage().contains("complex"), e.getMessage());
      assertThrows(IllegalArgumentException.class, () -> t.encode(1L));
      assertThrows(IllegalArgumentException.class, () -> t.checkBits(0));
      assertThrows(IllegalArgumentException.class, () -> t.decode(0));
      assertTrue(t.range().contains(t.component().range()), t.range());
    }
  }

  @Test
  void encodeAndDecodeValues() {
    assertEquals(0x3FC00000L, DType.F32.encode(1.5));
    assertEquals(0x3E00L, DType.F16.encode(1.5));
    assertEquals(0x3FC0L, DType.BF16.encode(1.5));
    assertEquals(1.5, DType.F16.decode(DType.F16.encode(1.5)));
    assertEquals(-2.0, DType.BF16.decode(DType.BF16.encode(-2.0)));
    assertEquals(65504.0, DType.F16.decode(DType.F16.encode(65504.0)));
    assertEquals(0xFFL, DType.I8.encode(-1));
    assertEquals(-1.0, DType.I8.decode(DType.I8.encode(-1)));
    assertEquals(Long.MAX_VALUE, DType.I64.encode(Long.MAX_VALUE));
    assertThrows(IllegalArgumentException.class, () -> DType.U8.encode(256));
    assertThrows(IllegalArgumentException.class, () -> DType.I32.encode(1.5));
  }

  @Test
  void everyDtypeRefusesValuesOutsideItsRange() {
    // Integers: no saturation, no wrapping; the message names the range.
    assertRefused(DType.I64, 1e30, "[-9223372036854775808, 9223372036854775807]");
    assertRefused(DType.U64, -1.0, "[0, 18446744073709551615]");
    assertRefused(DType.U64, 0x1p64, "[0, 18446744073709551615]");
    assertRefused(DType.I64, 0x1p63, "out of range for I64");
    assertRefused(DType.I32, 1e30, "[-2147483648, 2147483647]");
    assertRefused(DType.U32, 4294967296.0, "[0, 4294967295]");
    assertRefused(DType.I8, -129, "[-128, 127]");
    assertRefused(DType.U8, -1, "[0, 255]");
    // NaN, infinities and fractions are not integers.
    for (DType t : new DType[] {DType.I8, DType.U8, DType.I32, DType.U32, DType.I64, DType.U64}) {
      assertRefused(t, Double.NaN, "not NaN");
      assertRefused(t, Double.POSITIVE_INFINITY, "not Infinity");
      assertRefused(t, 2.5, "not 2.5");
    }
    // Past 2^53 a double is not exact: 64-bit integers of that size go as longs.
    assertRefused(DType.I64, 0x1p60, "as a long");
    assertRefused(DType.U64, 0x1p53 + 2, "as a long");
    assertEquals(1L << 53, DType.I64.encode(0x1p53));
    assertEquals(-(1L << 53), DType.I64.encode(-0x1p53));
    assertEquals(Long.MIN_VALUE, DType.I64.encode(Long.MIN_VALUE));
    assertEquals(Long.MAX_VALUE, DType.U64.encode(Long.MAX_VALUE));
    assertThrows(IllegalArgumentException.class, () -> DType.U64.encode(-1L));
    assertEquals(0xFFFF_FFFFL, DType.U32.encode(4294967295.0));
    // Floating point: finite values that would become infinite are refused; NaN and infinities are values.
    assertRefused(DType.F32, 1e39, "[-3.4028235E38, 3.4028235E38]");
    assertRefused(DType.F16, 65520.0, "[-65504.0, 65504.0]");
    assertRefused(DType.BF16, 1e39, "out of range for BF16");
    assertRefused(DType.F16, -1e6, "out of range for F16");
    assertEquals(0x7C00L, DType.F16.encode(Double.POSITIVE_INFINITY));
    assertTrue(Float.isNaN((float) DType.F32.decode(DType.F32.encode(Double.NaN))));
    assertEquals(Double.MAX_VALUE, DType.F64.decode(DType.F64.encode(Double.MAX_VALUE)));
    assertEquals(65504.0, DType.F16.decode(DType.F16.encode(65519.0))); // rounds down to the largest half
  }

  @Test
  void bitPatternsMustFitOneElement() {
    assertEquals(0xFFL, DType.U8.checkBits(0xFF));
    assertEquals(-1L, DType.U64.checkBits(-1));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DType.I8.checkBits(0x100));
    assertTrue(e.getMessage().contains("do not fit in one I8"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> DType.F32.checkBits(1L << 32));
  }

  private static void assertRefused(DType t, double value, String text) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> t.encode(value),
      t + " took " + value);
    assertTrue(e.getMessage().contains(text), "'" + e.getMessage() + "' should mention '" + text + "'");
  }

  @Test
  void viewsAreCheckedHandles() {
    BufferHandle h = BufferHandle.issue("local", 0, 1, 1, DType.F64, 100);
    BufferHandle v = h.view(10, 20).view(5, 5);
    assertEquals(15, v.offset());
    assertEquals(5, v.length());
    assertEquals(120, v.byteOffset());
    assertEquals(h, v.whole());
    assertThrows(IllegalArgumentException.class, () -> h.view(90, 20));
  }
}
