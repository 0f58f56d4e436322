package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.DeviceStats;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.reflect.Array;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Java arrays and NIO buffers in and out of device buffers: the bytes the device holds, and refusals. */
@ExtendWith(VertxExtension.class)
class ArrayTransferTest {

  private DeviceClient client;

  @BeforeEach
  void deploy(Vertx vertx, VertxTestContext ctx) {
    TestDevices.deploy(vertx, TestDevices.options()).map(id -> client = DeviceClient.create(vertx))
      .onComplete(ctx.succeedingThenComplete());
  }

  /** One Java array type on one dtype: how to upload and download it, and its little-endian bytes. */
  private record Case(DType dtype, Object array, Function<BufferHandle, Future<BufferHandle>> upload,
                      Function<BufferHandle, Future<?>> download, Buffer bytes) {
  }

  private List<Case> cases(int n, long seed) {
    Random r = new Random(seed);
    float[] f = new float[n];
    double[] d = new double[n];
    int[] i = new int[n];
    long[] l = new long[n];
    short[] s = new short[n];
    for (int k = 0; k < n; k++) {
      f[k] = (float) r.nextGaussian();
      d[k] = r.nextGaussian();
      i[k] = r.nextInt();
      l[k] = r.nextLong();
      s[k] = (short) r.nextInt();
    }
    // Values whose bits a conversion could change: a NaN payload, negative zero, the extremes.
    f[0] = Float.intBitsToFloat(0x7FC0_1234);
    f[n - 1] = -0.0f;
    d[0] = Double.longBitsToDouble(0x7FF8_0000_0000_BEEFL);
    d[n - 1] = Double.MIN_VALUE;
    i[0] = Integer.MIN_VALUE;
    l[0] = Long.MIN_VALUE;
    s[0] = (short) 0xFFFF;
    Buffer fb = Buffer.buffer();
    Buffer db = Buffer.buffer();
    Buffer ib = Buffer.buffer();
    Buffer lb = Buffer.buffer();
    Buffer sb = Buffer.buffer();
    for (int k = 0; k < n; k++) {
      fb.appendIntLE(Float.floatToRawIntBits(f[k]));
      db.appendLongLE(Double.doubleToRawLongBits(d[k]));
      ib.appendIntLE(i[k]);
      lb.appendLongLE(l[k]);
      sb.appendShortLE(s[k]);
    }
    return List.of(
      new Case(DType.F32, f, h -> client.upload(h, f), client::downloadFloats, fb),
      new Case(DType.F64, d, h -> client.upload(h, d), client::downloadDoubles, db),
      new Case(DType.I32, i, h -> client.upload(h, i), client::downloadInts, ib),
      new Case(DType.U32, i, h -> client.upload(h, i), client::downloadInts, ib),
      new Case(DType.I64, l, h -> client.upload(h, l), client::downloadLongs, lb),
      new Case(DType.U64, l, h -> client.upload(h, l), client::downloadLongs, lb),
      new Case(DType.F16, s, h -> client.upload(h, s), client::downloadShorts, sb),
      new Case(DType.BF16, s, h -> client.upload(h, s), client::downloadShorts, sb));
  }

  /** Complex elements are real, imaginary pairs of their component, in the arrays and on the device. */
  @Test
  void complexBuffersTakePairs(VertxTestContext ctx) {
    float[] c64 = {1, -1, 2.5f, 0, Float.NaN, -0.0f};
    double[] c128 = {0.5, 1e300, -2, Double.MIN_VALUE};
    client.alloc(DType.C64, 3).compose(h -> client.upload(h, c64)).compose(h -> Future.all(client.download(h),
        client.downloadFloats(h.view(1, 2)), client.alloc(DType.C128, 2).compose(z -> client.upload(z, c128))
          .compose(client::downloadDoubles),
        client.fill(h, 1.0).transform(Future::succeededFuture),
        client.upload(h, new float[3]).transform(Future::succeededFuture),
        client.downloadDoubles(h).transform(Future::succeededFuture)))
      .onComplete(ctx.succeeding(all -> ctx.verify(() -> {
        Buffer raw = all.resultAt(0);
        assertEquals(24, raw.length());
        assertEquals(Float.floatToRawIntBits(2.5f), raw.getIntLE(8), "element 1's real part at byte 8");
        assertBitsEqual(new float[] {2.5f, 0, Float.NaN, -0.0f}, all.resultAt(1), "a C64 view");
        assertBitsEqual(c128, all.resultAt(2), "C128");
        String[] named = {"complex", "real, imaginary pairs", "C64"};
        for (int k = 0; k < named.length; k++) {
          io.vertx.core.AsyncResult<?> refused = all.resultAt(3 + k);
          CudaException e = (CudaException) refused.cause();
          assertEquals(FailureCode.BAD_REQUEST, e.code(), e.getMessage());
          assertTrue(e.getMessage().contains(named[k]), "'" + e.getMessage() + "' names " + named[k]);
        }
        ctx.completeNow();
      })));
  }

  @Test
  void everyArrayTypeRoundTripsByteEqual(VertxTestContext ctx) {
    int n = 1001;
    List<Case> cases = cases(n, 1);
    List<Future<?>> all = new ArrayList<>();
    for (Case c : cases) {
      all.add(client.alloc(c.dtype(), n).compose(c.upload())
        .compose(h -> Future.all(client.download(h), c.download().apply(h))));
    }
    Future.all(all).onComplete(ctx.succeeding(done -> ctx.verify(() -> {
      for (int k = 0; k < cases.size(); k++) {
        Case c = cases.get(k);
        io.vertx.core.CompositeFuture read = done.resultAt(k);
        assertEquals(c.bytes(), read.resultAt(0), c.dtype() + ": the device holds the array's little-endian bytes");
        assertBitsEqual(c.array(), read.resultAt(1), c.dtype() + ": the array comes back bit for bit");
      }
      ctx.completeNow();
    })));
  }

  @Test
  void viewsWriteAndReadTheirRangeOnly(VertxTestContext ctx) {
    double[] middle = {1.5, -2.5, 3.5, Double.NaN, -0.0};
    client.alloc(DType.F64, 12)
      .compose(h -> client.upload(h, new double[12])
        .compose(x -> client.upload(h.view(4, 5), middle))
        .compose(x -> Future.all(client.downloadDoubles(h), client.downloadDoubles(h.view(3, 7)),
          client.downloadDoubles(h.view(4, 5).view(1, 3)))))
      .onComplete(ctx.succeeding(all -> ctx.verify(() -> {
        assertBitsEqual(new double[] {0, 0, 0, 0, 1.5, -2.5, 3.5, Double.NaN, -0.0, 0, 0, 0}, all.resultAt(0), "whole");
        assertBitsEqual(new double[] {0, 1.5, -2.5, 3.5, Double.NaN, -0.0, 0}, all.resultAt(1), "view(3, 7)");
        assertBitsEqual(new double[] {-2.5, 3.5, Double.NaN}, all.resultAt(2), "a view of a view");
        ctx.completeNow();
      })));
  }

  /**
   * Larger than the views a transfer sends at once: the rest is sent as earlier views complete, and
   * a download asked for right after the upload (not waiting on it) still reads all of it.
   */
  @Test
  void aLargeArrayGoesInViewsAndKeepsItsPlace(VertxTestContext ctx) {
    int n = 13_000_003; // about six 8 MiB views of F32, the last a short one
    float[] big = new float[n];
    for (int k = 0; k < n; k++) {
      big[k] = k * 0.25f - 7;
    }
    client.alloc(DType.F32, n).compose(h -> {
      Future<BufferHandle> up = client.upload(h, big);
      Future<float[]> back = client.downloadFloats(h);
      Future<float[]> tail = client.downloadFloats(h.view(n - 3, 3));
      return Future.all(up, back, tail);
    }).onComplete(ctx.succeeding(all -> ctx.verify(() -> {
      assertArrayEquals(big, (float[]) all.resultAt(1));
      assertArrayEquals(new float[] {big[n - 3], big[n - 2], big[n - 1]}, (float[]) all.resultAt(2));
      ctx.completeNow();
    })));
  }

  @Test
  void nioBuffersOfAnyOrderAndPositionAreLeftAsTheyWere(VertxTestContext ctx) {
    FloatBuffer src = ByteBuffer.allocateDirect(40).order(ByteOrder.BIG_ENDIAN).asFloatBuffer();
    src.put(new float[] {9, 9, 1, 2, 3, 4, 5, 9, 9, 9}).position(2).limit(7);
    FloatBuffer dst = FloatBuffer.allocate(8).position(1).limit(6);
    ByteBuffer raw = ByteBuffer.allocateDirect(12).order(ByteOrder.LITTLE_ENDIAN);
    raw.putInt(0x3F80_0000).putInt(0x4000_0000).putInt(0x4040_0000).flip(); // 1f, 2f, 3f as raw F32 bytes
    byte[] u8 = {0, 1, (byte) 0x80, (byte) 0xFF};
    ByteBuffer u8Back = ByteBuffer.allocate(4);
    client.alloc(DType.F32, 5).compose(h -> client.upload(h, src)
        .compose(x -> client.downloadInto(h, dst))
        .compose(x -> client.alloc(DType.F32, 3)).compose(g -> client.upload(g, raw)).compose(client::downloadFloats)
        .compose(threes -> client.alloc(DType.U8, 4).compose(b -> client.upload(b, ByteBuffer.wrap(u8)))
          .compose(b -> client.downloadInto(b, u8Back)).map(threes)))
      .onComplete(ctx.succeeding(threes -> ctx.verify(() -> {
        assertEquals(2, src.position(), "the source's position is left alone");
        assertEquals(7, src.limit());
        assertEquals(1, dst.position(), "the target's position is left alone");
        assertEquals(6, dst.limit());
        assertArrayEquals(new float[] {0, 1, 2, 3, 4, 5, 0, 0}, dst.array());
        assertArrayEquals(new float[] {1, 2, 3}, threes, "a ByteBuffer holds any dtype's raw bytes");
        assertEquals(0, raw.position());
        assertArrayEquals(u8, u8Back.array());
        ctx.completeNow();
      })));
  }

  @Test
  void mismatchesAreRefusedNamingThemAndNothingIsSent(VertxTestContext ctx) {
    client.alloc(DType.I32, 4).compose(ints -> client.alloc(DType.F32, 4).compose(floats -> client.stats()
      .compose(before -> {
        List<Future<?>> refused = List.of(
          client.upload(ints, new float[4]),
          client.upload(floats, new float[3]),
          client.upload(floats, new double[4]),
          client.upload(ints, new long[4]),
          client.upload(floats.view(1, 2), new float[3]),
          client.upload(floats, (float[]) null),
          client.upload(null, new float[4]),
          client.upload(floats, ByteBuffer.allocate(15)),
          client.upload(floats, CharBuffer.allocate(4)),
          client.downloadInts(floats),
          client.downloadShorts(ints),
          client.downloadInto(floats, FloatBuffer.allocate(5)),
          client.downloadInto(floats, FloatBuffer.allocate(4).asReadOnlyBuffer()),
          client.downloadInto(ints, IntBuffer.allocate(4).asReadOnlyBuffer()));
        return Future.join(refused).transform(x -> Future.succeededFuture(refused))
          .compose(f -> client.stats().map(after -> List.of(f, before, after)))
          .compose(r -> client.upload(floats, new float[] {1, 2, 3, 4}).compose(client::downloadFloats)
            .map(back -> List.of(r.get(0), r.get(1), r.get(2), back)));
      })))
      .onComplete(ctx.succeeding(r -> ctx.verify(() -> {
        @SuppressWarnings("unchecked")
        List<Future<?>> refused = (List<Future<?>>) r.get(0);
        String[] named = {"I32", "has 3 elements", "F64", "I64", "has 3 elements", "null", "null", "15 bytes",
          "CharBuffer", "I32", "F16", "has 5 elements", "read-only", "read-only"};
        for (int k = 0; k < refused.size(); k++) {
          CudaException e = (CudaException) refused.get(k).cause();
          assertEquals(FailureCode.BAD_REQUEST, e.code(), "refusal " + k);
          assertTrue(e.getMessage().contains(named[k]), "refusal " + k + ": '" + e.getMessage() + "' names " + named[k]);
        }
        DeviceStats before = (DeviceStats) r.get(1);
        DeviceStats after = (DeviceStats) r.get(2);
        assertEquals(before.getFailuresByCode().get("BAD_REQUEST"), after.getFailuresByCode().get("BAD_REQUEST"),
          "the device saw none of them");
        assertEquals(before.getOperationsServed() + 1, after.getOperationsServed(), "only the first stats in between");
        assertArrayEquals(new float[] {1, 2, 3, 4}, (float[]) r.get(3), "the device still serves");
        ctx.completeNow();
      })));
  }

  private static void assertBitsEqual(Object expected, Object actual, String what) {
    assertArrayEquals(bits(expected), bits(actual), what);
  }

  // Each element's bits (raw for floating point, so NaN payloads count).
  private static long[] bits(Object array) {
    long[] out = new long[Array.getLength(array)];
    for (int k = 0; k < out.length; k++) {
      Object v = Array.get(array, k);
      out[k] = v instanceof Float ? Float.floatToRawIntBits((Float) v)
        : v instanceof Double ? Double.doubleToRawLongBits((Double) v) : ((Number) v).longValue();
    }
    return out;
  }
}
