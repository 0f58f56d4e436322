package com.vertxcuda.internal;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What fits which handle, and the bytes a device gets, without a device. */
class HostElementsTest {

  private static BufferHandle handle(DType dtype, long count) {
    return BufferHandle.issue("local", 0, 1, 7, dtype, count);
  }

  @Test
  void aBufferLongerThanAJavaArrayIsRefusedBeforeAnyArrayIsMade() {
    assertRefused(() -> HostElements.arrayFor(handle(DType.F32, 3_000_000_000L), float[].class), "download views");
    // Two values per complex element: half as many elements fit.
    assertRefused(() -> HostElements.arrayFor(handle(DType.C64, 1L << 30), float[].class), "download views");
    // The dtype is checked first, so a wrong one costs no allocation of its length.
    assertRefused(() -> HostElements.arrayFor(handle(DType.I32, Integer.MAX_VALUE - 8), float[].class), "F32 or C64");
    assertEquals(6, ((float[]) HostElements.arrayFor(handle(DType.C64, 3), float[].class).array()).length);
  }

  @Test
  void valuesGoLittleEndianWhateverTheSourceOrder() {
    DoubleBuffer big = ByteBuffer.allocateDirect(32).order(ByteOrder.BIG_ENDIAN).asDoubleBuffer();
    big.put(new double[] {9, 1.5, -2, 9}).position(1).limit(3);
    HostElements values = HostElements.of(big, false);
    values.checkFits(handle(DType.F64, 2));
    ByteBuffer le = ByteBuffer.allocate(16);
    values.write(0, 2, le);
    ByteBuffer expected = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putDouble(1.5).putDouble(-2);
    assertArrayEquals(expected.array(), le.array());
    assertEquals(1, big.position(), "the caller's buffer is not moved");

    float[] back = new float[4];
    HostElements into = HostElements.of(back);
    into.checkFits(handle(DType.C64, 2));
    ByteBuffer device = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putFloat(1).putFloat(2).putFloat(3)
      .putFloat(4).flip();
    into.read(device, 0, 4);
    assertArrayEquals(new float[] {1, 2, 3, 4}, back);
    assertThrows(IllegalStateException.class, () -> into.read(ByteBuffer.allocate(12), 0, 4),
      "a reply of the wrong size is not taken");
  }

  /**
   * A download landed in arrays of SEGMENT bytes: pieces that arrive out of order and straddle the
   * arrays' edges come back as one Buffer holding every byte where it belongs, with no copy made of it.
   */
  @Test
  void aSegmentedDownloadHoldsEveryPieceWhereItBelongs() {
    int seg = HostElements.SEGMENT;
    int total = 2 * seg + 12_345; // three arrays, the last one short
    byte[] expected = new byte[total];
    new java.util.Random(7).nextBytes(expected);
    HostElements into = HostElements.segmented(total);
    into.checkFits(handle(DType.U8, total));
    // Pieces of odd sizes, read back to front: several cross an array's edge.
    int piece = seg / 3 + 1;
    for (int from = (total - 1) / piece * piece; from >= 0; from -= piece) {
      int n = Math.min(piece, total - from);
      ByteBuffer le = ByteBuffer.wrap(expected, from, n).slice();
      into.read(le, from, n);
      assertEquals(0, le.remaining(), "the piece was taken whole");
    }
    io.vertx.core.buffer.Buffer landed = into.landed();
    assertEquals(total, landed.length());
    assertArrayEquals(expected, landed.getBytes());
    assertEquals(expected[seg - 1], landed.getByte(seg - 1));
    assertEquals(ByteBuffer.wrap(expected, seg - 2, 4).order(ByteOrder.LITTLE_ENDIAN).getFloat(),
      landed.getFloatLE(seg - 2), "a value across two arrays reads whole");
    assertEquals(3, VertxInternals.byteBuf(landed).nioBufferCount(), "one component per array, none merged");
  }

  /**
   * A landing asks for lent memory once, when the first piece lands: where it gets some, every piece
   * lands there; where it gets none, the pieces land in arrays of SEGMENT bytes, as a segmented
   * download's, and come back as one composite.
   */
  @Test
  void aLandingTakesTheLentMemoryOnceOrElseSegments() {
    int total = HostElements.SEGMENT + 4_104;
    byte[] expected = new byte[total];
    new java.util.Random(8).nextBytes(expected);
    int[] asked = new int[2];
    ByteBuffer lent = ByteBuffer.allocateDirect(total);
    HostElements into = HostElements.landing(total, k -> {
      asked[0]++;
      return lent.duplicate();
    });
    HostElements none = HostElements.landing(total, k -> {
      asked[1]++;
      return null;
    });
    int half = total / 2;
    for (HostElements h : new HostElements[] {into, none}) {
      h.checkFits(handle(DType.U8, total));
      h.read(ByteBuffer.wrap(expected, half, total - half).slice(), half, total - half);
      h.read(ByteBuffer.wrap(expected, 0, half).slice(), 0, half);
    }
    assertArrayEquals(new int[] {1, 1}, asked, "each asked for memory once");
    byte[] inLent = new byte[total];
    lent.duplicate().get(inLent);
    assertArrayEquals(expected, inLent, "every piece landed in the lent memory");
    io.vertx.core.buffer.Buffer landed = none.landed();
    assertArrayEquals(expected, landed.getBytes());
    assertEquals(2, VertxInternals.byteBuf(landed).nioBufferCount(), "with none lent, arrays of SEGMENT bytes");
  }

  private static void assertRefused(Runnable r, String named) {
    CudaException e = assertThrows(CudaException.class, r::run);
    assertEquals(FailureCode.BAD_REQUEST, e.code());
    assertTrue(e.getMessage().contains(named), "'" + e.getMessage() + "' names " + named);
  }
}
