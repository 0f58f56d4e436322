package com.vertxcuda;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
