package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.internal.ChunkedTransfer;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Arrays and NIO buffers staged through the device's lent transfer memory in a ring of chunks
 * ({@code ChunkedTransfer}): byte-equal at and around chunk boundaries, order kept behind a large
 * upload, a failure mid-way answered once with every lent buffer back, and, in process isolation, a
 * download larger than the device may lend going through its region in pieces. Runs in both
 * isolation modes (the process-isolation surefire execution runs it again).
 */
@ExtendWith(VertxExtension.class)
class ChunkRingTest {

  /**
   * Bytes of a chunk with the default region ({@code ChunkedTransfer.LOCAL_CHUNK}), for transfers of
   * more than {@link #SPLIT} such chunks; smaller ones are cut in {@code SPLIT} chunks.
   */
  private static final int CHUNK = 8 << 20;
  /** Chunks a smaller transfer is cut in: one per copy thread, at most eight (one on a machine of few cores). */
  private static final int SPLIT = ChunkedTransfer.SPLIT;
  /** Bytes of a chunk at least, when a transfer is cut in {@code SPLIT}. */
  private static final int SPLIT_CHUNK = ChunkedTransfer.SPLIT_CHUNK;

  private DeviceVerticle device;

  private Future<DeviceClient> deploy(Vertx vertx, DeviceOptions options) {
    device = new DeviceVerticle(options);
    return vertx.deployVerticle(device).map(id -> DeviceClient.create(vertx));
  }

  /**
   * The element counts that straddle chunk boundaries for elements of {@code size} bytes: around one
   * chunk, and past {@code SPLIT} whole chunks (a last chunk of one element).
   */
  private static int[] boundaries(int size) {
    int c = CHUNK / size;
    return new int[] {1, c - 1, c, c + 1, 2 * c + 3, SPLIT * c + 1};
  }

  /**
   * Byte sizes around where the pump's cut changes: the largest copied inline and the smallest
   * pumped (one {@code SPLIT_CHUNK} and a few bytes more), chunks of {@code SPLIT_CHUNK} with a short
   * last one, the largest cut in {@code SPLIT} chunks of {@code SPLIT_CHUNK} and the smallest cut in
   * larger ones, and a cut that is no multiple of a page of the size. Each a multiple of 16 bytes:
   * whole elements of every type.
   */
  private static final int[] SPLIT_SIZES = {SPLIT_CHUNK - 16, SPLIT_CHUNK + 16, (1 << 20) + 16, SPLIT * SPLIT_CHUNK - 16,
    SPLIT * SPLIT_CHUNK + 16, (5 << 20) + 48};

  /**
   * Every host type, both ways, at the sizes around the pump's cuts ({@link #SPLIT_SIZES}), checked
   * element by element against its source: each Java array uploaded, then read back into an array kept
   * (downloadInto) and into a new one; heap and direct Buffers uploaded and downloaded as a Buffer; heap
   * and direct NIO buffers (bytes and floats) uploaded and read back into the other kind.
   */
  @Test
  @Timeout(value = 180, timeUnit = TimeUnit.SECONDS)
  void everyHostTypeRoundTripsAroundThePumpsCuts(Vertx vertx, VertxTestContext ctx) {
    Random r = new Random(50);
    deploy(vertx, TestDevices.options()).compose(client -> {
      Future<Void> all = Future.succeededFuture();
      for (int bytes : SPLIT_SIZES) {
        float[] f = new float[bytes / 4];
        for (int k = 0; k < f.length; k++) {
          f[k] = Float.intBitsToFloat(r.nextInt());
        }
        double[] d = r.doubles(bytes / 8).toArray();
        int[] i = r.ints(bytes / 4).toArray();
        long[] l = r.longs(bytes / 8).toArray();
        short[] s = new short[bytes / 2];
        for (int k = 0; k < s.length; k++) {
          s[k] = (short) r.nextInt();
        }
        byte[] raw = new byte[bytes];
        r.nextBytes(raw);
        String at = " of " + bytes + " bytes";
        all = all
          .compose(x -> bothWays(ctx, client, DType.F32, f.length, h -> client.upload(h, f), client::downloadFloats,
            h -> { float[] kept = new float[f.length]; return client.downloadInto(h, FloatBuffer.wrap(kept)).map(kept); },
            back -> assertArrayEquals(bits(f), bits((float[]) back), "float[]" + at)))
          .compose(x -> bothWays(ctx, client, DType.F64, d.length, h -> client.upload(h, d), client::downloadDoubles,
            h -> { double[] kept = new double[d.length]; return client.downloadInto(h, DoubleBuffer.wrap(kept)).map(kept); },
            back -> assertArrayEquals(d, (double[]) back, "double[]" + at)))
          .compose(x -> bothWays(ctx, client, DType.I32, i.length, h -> client.upload(h, i), client::downloadInts,
            h -> { int[] kept = new int[i.length]; return client.downloadInto(h, IntBuffer.wrap(kept)).map(kept); },
            back -> assertArrayEquals(i, (int[]) back, "int[]" + at)))
          .compose(x -> bothWays(ctx, client, DType.I64, l.length, h -> client.upload(h, l), client::downloadLongs,
            h -> { long[] kept = new long[l.length]; return client.downloadInto(h, LongBuffer.wrap(kept)).map(kept); },
            back -> assertArrayEquals(l, (long[]) back, "long[]" + at)))
          .compose(x -> bothWays(ctx, client, DType.F16, s.length, h -> client.upload(h, s), client::downloadShorts,
            h -> { short[] kept = new short[s.length]; return client.downloadInto(h, ShortBuffer.wrap(kept)).map(kept); },
            back -> assertArrayEquals(s, (short[]) back, "short[]" + at)))
          .compose(x -> buffersBothWays(ctx, client, raw, at));
      }
      return all;
    }).onComplete(ctx.succeedingThenComplete());
  }

  // Uploads with up, then reads back into a new array (down) and into a kept one (into), checking each.
  private Future<Void> bothWays(VertxTestContext ctx, DeviceClient client, DType dtype, int n,
                                Function<BufferHandle, Future<BufferHandle>> up, Function<BufferHandle, Future<?>> down,
                                Function<BufferHandle, Future<?>> into, java.util.function.Consumer<Object> check) {
    return client.alloc(dtype, n).compose(h -> up.apply(h)
      .compose(x -> down.apply(h)).map(back -> check(ctx, () -> check.accept(back)))
      .compose(x -> into.apply(h)).map(back -> check(ctx, () -> check.accept(back)))
      .compose(x -> client.free(h))).mapEmpty();
  }

  // raw from a heap Buffer, a direct Buffer, a heap and a direct ByteBuffer and FloatBuffer, each read
  // back (as a Buffer, into a direct or heap NIO buffer) and checked byte by byte.
  private Future<Void> buffersBothWays(VertxTestContext ctx, DeviceClient client, byte[] raw, String at) {
    int bytes = raw.length;
    Buffer heap = Buffer.buffer(raw.clone());
    ByteBuffer directBytes = ByteBuffer.allocateDirect(bytes).put(raw).flip();
    Buffer direct = com.vertxcuda.internal.VertxInternals.buffer(io.netty.buffer.Unpooled.wrappedBuffer(directBytes.duplicate()));
    ByteBuffer heapBytes = ByteBuffer.wrap(raw.clone());
    FloatBuffer heapFloats = ByteBuffer.wrap(raw.clone()).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
    FloatBuffer directFloats = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN).put(raw).flip().asFloatBuffer();
    Buffer expected = Buffer.buffer(raw);
    return client.alloc(DType.U8, bytes).compose(h -> client.upload(h, heap).compose(x -> client.download(h))
      .map(back -> check(ctx, () -> assertEquals(expected, back, "heap Buffer" + at)))
      .compose(x -> client.fill(h, 0)).compose(x -> client.upload(h, direct)).compose(x -> client.download(h))
      .map(back -> check(ctx, () -> assertEquals(expected, back, "direct Buffer" + at)))
      .compose(x -> client.fill(h, 0)).compose(x -> client.upload(h, heapBytes)).compose(x -> {
        ByteBuffer into = ByteBuffer.allocateDirect(bytes);
        return client.downloadInto(h, into).map(into);
      }).map(back -> check(ctx, () -> assertEquals(ByteBuffer.wrap(raw), back, "heap ByteBuffer into a direct one" + at)))
      .compose(x -> client.fill(h, 0)).compose(x -> client.upload(h, directBytes)).compose(x -> {
        ByteBuffer into = ByteBuffer.allocate(bytes);
        return client.downloadInto(h, into).map(into);
      }).map(back -> check(ctx, () -> assertEquals(ByteBuffer.wrap(raw), back, "direct ByteBuffer into a heap one" + at)))
      .compose(x -> client.free(h))).compose(x -> client.alloc(DType.F32, bytes / 4))
      .compose(f -> client.upload(f, heapFloats).compose(x -> {
        FloatBuffer into = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
        return client.downloadInto(f, into).map(into);
      }).map(back -> check(ctx, () -> assertFloatsEqual(heapFloats, back, "heap FloatBuffer into a direct one" + at)))
      .compose(x -> client.fill(f, 0)).compose(x -> client.upload(f, directFloats)).compose(x -> {
        FloatBuffer into = FloatBuffer.allocate(bytes / 4);
        return client.downloadInto(f, into).map(into);
      }).map(back -> check(ctx, () -> assertFloatsEqual(directFloats, back, "direct FloatBuffer into a heap one" + at)))
      .compose(x -> client.free(f))).mapEmpty();
  }

  // Element by element, by their bits (NaN payloads included); the buffers' positions untouched.
  private static void assertFloatsEqual(FloatBuffer expected, FloatBuffer actual, String what) {
    assertEquals(0, actual.position(), what + ": position");
    assertEquals(expected.remaining(), actual.remaining(), what + ": length");
    for (int k = 0; k < expected.remaining(); k++) {
      if (Float.floatToRawIntBits(expected.get(k)) != Float.floatToRawIntBits(actual.get(k))) {
        throw new AssertionError(what + ": element " + k);
      }
    }
  }

  /**
   * An upload whose handle claims more elements than its buffer has (a handle rebuilt from JSON with
   * the wrong length, by a holder of its token) is refused BAD_REQUEST and writes nothing: the pump
   * checks the whole range before its first chunk goes, not chunk by chunk (its first chunks, inside
   * the buffer, were written before the one past the end was refused). Every kind the pump takes.
   */
  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void anUploadPastTheBuffersEndWritesNothing(Vertx vertx, VertxTestContext ctx) {
    int n = 3 * CHUNK / 4; // three chunks of the buffer: the claim adds three more
    deploy(vertx, TestDevices.options()).compose(client -> client.alloc(DType.F32, n).compose(h -> {
      BufferHandle claim = new BufferHandle(h.toJson().put("length", 2L * n));
      float[] sevens = new float[2 * n];
      Arrays.fill(sevens, 7f);
      Buffer bytes = Buffer.buffer(8 * n);
      for (int i = 0; i < 2 * n; i++) {
        bytes.appendFloatLE(7f);
      }
      FloatBuffer nio = ByteBuffer.allocateDirect(8 * n).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().put(sevens);
      nio.flip();
      List<Function<BufferHandle, Future<?>>> uploads = List.of(
        c -> client.upload(c, bytes), c -> client.upload(c, sevens), c -> client.upload(c, (java.nio.Buffer) nio));
      Future<Void> all = client.fill(h, 0).mapEmpty();
      for (Function<BufferHandle, Future<?>> upload : uploads) {
        all = all.compose(x -> upload.apply(claim).transform(ar -> {
          ctx.verify(() -> {
            assertTrue(ar.failed(), "an upload past the buffer's end succeeded");
            assertEquals(FailureCode.BAD_REQUEST, ((CudaException) ar.cause()).code(), String.valueOf(ar.cause()));
          });
          return client.downloadFloats(h);
        })).map(back -> {
          long written = 0;
          for (float f : back) {
            written += f == 7f ? 1 : 0;
          }
          long w = written;
          ctx.verify(() -> assertEquals(0, w, "elements the refused upload wrote"));
          return null;
        });
      }
      return all;
    })).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void floatsRoundTripAtChunkBoundaries(Vertx vertx, VertxTestContext ctx) {
    deploy(vertx, TestDevices.options()).compose(client -> {
      Future<Void> all = Future.succeededFuture();
      for (int n : boundaries(4)) {
        float[] a = new float[n];
        Random r = new Random(n);
        for (int k = 0; k < n; k++) {
          a[k] = Float.intBitsToFloat(r.nextInt()); // any bits, NaN payloads included
        }
        all = all.compose(x -> roundTrip(client, DType.F32, n, h -> client.upload(h, a), client::downloadFloats)
          .map(back -> {
            ctx.verify(() -> assertArrayEquals(bits(a), bits((float[]) back), n + " floats"));
            return null;
          }));
      }
      return all;
    }).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void otherArraysAndNioBuffersRoundTripAcrossABoundary(Vertx vertx, VertxTestContext ctx) {
    Random r = new Random(7);
    deploy(vertx, TestDevices.options()).compose(client -> {
      List<Future<?>> all = new ArrayList<>();
      for (int n : new int[] {1, CHUNK / 8 + 1}) {
        double[] d = r.doubles(n).toArray();
        long[] l = r.longs(n).toArray();
        all.add(roundTrip(client, DType.F64, n, h -> client.upload(h, d), client::downloadDoubles)
          .map(back -> check(ctx, () -> assertArrayEquals(d, (double[]) back, n + " doubles"))));
        all.add(roundTrip(client, DType.I64, n, h -> client.upload(h, l), client::downloadLongs)
          .map(back -> check(ctx, () -> assertArrayEquals(l, (long[]) back, n + " longs"))));
      }
      for (int n : new int[] {1, CHUNK / 4 + 1}) {
        int[] i = r.ints(n).toArray();
        all.add(roundTrip(client, DType.I32, n, h -> client.upload(h, i), client::downloadInts)
          .map(back -> check(ctx, () -> assertArrayEquals(i, (int[]) back, n + " ints"))));
      }
      for (int n : new int[] {1, CHUNK / 2 - 1, CHUNK / 2 + 1}) {
        short[] s = new short[n];
        for (int k = 0; k < n; k++) {
          s[k] = (short) r.nextInt();
        }
        all.add(roundTrip(client, DType.BF16, n, h -> client.upload(h, s), client::downloadShorts)
          .map(back -> check(ctx, () -> assertArrayEquals(s, (short[]) back, n + " shorts"))));
      }
      // A big-endian direct FloatBuffer at an offset, into a heap one; a heap DoubleBuffer into a direct
      // ByteBuffer of little-endian bytes: positions and limits stay as they were.
      int n = CHUNK / 4 + 5;
      FloatBuffer src = ByteBuffer.allocateDirect((n + 3) * 4).order(ByteOrder.BIG_ENDIAN).asFloatBuffer();
      for (int k = 0; k < n + 3; k++) {
        src.put(k, k * 0.5f - 3);
      }
      src.position(2).limit(n + 2);
      FloatBuffer dst = FloatBuffer.allocate(n + 1).position(1);
      all.add(client.alloc(DType.F32, n).compose(h -> client.upload(h, src).compose(x -> client.downloadInto(h, dst))
        .compose(x -> client.free(h))).map(x -> check(ctx, () -> {
          assertEquals(2, src.position());
          assertEquals(1, dst.position());
          for (int k = 0; k < n; k++) {
            assertEquals(src.get(2 + k), dst.get(1 + k), "float " + k);
          }
        })));
      int m = CHUNK / 8 + 2;
      DoubleBuffer doubles = DoubleBuffer.wrap(r.doubles(m).toArray());
      ByteBuffer raw = ByteBuffer.allocateDirect(m * 8);
      all.add(client.alloc(DType.F64, m).compose(h -> client.upload(h, doubles).compose(x -> client.downloadInto(h, raw))
        .compose(x -> client.free(h))).map(x -> check(ctx, () -> {
          ByteBuffer le = raw.duplicate().order(ByteOrder.LITTLE_ENDIAN);
          for (int k = 0; k < m; k++) {
            assertEquals(Double.doubleToRawLongBits(doubles.get(k)), le.getLong(k * 8), "double " + k);
          }
        })));
      return Future.all(all);
    }).onComplete(ctx.succeedingThenComplete());
  }

  /** 256 MiB of floats up and back byte-equal; prints the rates as an indication. */
  @Test
  @Timeout(value = 180, timeUnit = TimeUnit.SECONDS)
  void aQuarterGibibyteOfFloatsRoundTrips(Vertx vertx, VertxTestContext ctx) {
    int n = 64 << 20;
    float[] a = new float[n];
    for (int k = 0; k < n; k++) {
      a[k] = k * 0.125f - 1e6f;
    }
    long[] t = new long[3];
    deploy(vertx, TestDevices.options()).compose(client -> client.alloc(DType.F32, n).compose(h -> {
      t[0] = System.nanoTime();
      return client.upload(h, a).compose(x -> {
        t[1] = System.nanoTime();
        return client.downloadFloats(h);
      }).map(back -> {
        t[2] = System.nanoTime();
        System.out.printf("ChunkRingTest (%s): 256 MiB float[] up %.2f GB/s, down %.2f GB/s%n",
          TestDevices.isolation(), (4.0 * n) / (t[1] - t[0]), (4.0 * n) / (t[2] - t[1]));
        return back;
      }).compose(back -> client.free(h).map(back));
    })).onComplete(ctx.succeeding(back -> ctx.verify(() -> {
      assertTrue(Arrays.equals(a, back), "256 MiB of floats come back equal");
      ctx.completeNow();
    })));
  }

  /** A fill made right after a large upload on the same context runs after all of it. */
  @Test
  @Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
  void aRequestMadeAfterALargeUploadFollowsAllOfIt(Vertx vertx, VertxTestContext ctx) {
    int n = 10 * CHUNK / 4 + 7; // more chunks than the ring holds
    float[] ones = new float[n];
    Arrays.fill(ones, 1f);
    deploy(vertx, TestDevices.options()).compose(client -> client.alloc(DType.F32, n).compose(h -> {
      Future<BufferHandle> up = client.upload(h, ones);
      Future<BufferHandle> fill = client.fill(h, 7);
      Future<float[]> back = client.downloadFloats(h);
      return Future.all(up, fill, back).map(x -> back.result());
    })).onComplete(ctx.succeeding(back -> ctx.verify(() -> {
      for (int k = 0; k < n; k++) {
        if (back[k] != 7f) {
          throw new AssertionError("element " + k + " is " + back[k] + ": the fill ran before the upload's chunk");
        }
      }
      ctx.completeNow();
    })));
  }

  /**
   * The buffer freed (from another context, so in no order with the transfer) while a transfer
   * larger than the ring is on its way: one failed future, NOT_FOUND, and every transfer buffer the
   * transfer borrowed is back when it fails. (Should the free land after the whole transfer, which
   * then succeeds, it is tried again with a new buffer.)
   */
  @Test
  @Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
  void aFailureMidWayFailsOnceAndGivesEveryBufferBack(Vertx vertx, VertxTestContext ctx) {
    io.vertx.core.Context other = vertx.getOrCreateContext();
    deploy(vertx, TestDevices.options()).compose(client -> {
      long before = device.heldTransferBytes();
      return freedUnder(client, other, true, 5).compose(up -> freedUnder(client, other, false, 5)
        .map(down -> List.<Object>of(up, down, before)));
    }).compose(results -> {
      Promise<List<Object>> later = Promise.promise();
      vertx.setTimer(200, id -> later.complete(results));
      return later.future();
    }).onComplete(ctx.succeeding(results -> ctx.verify(() -> {
      long before = (Long) results.get(2);
      for (int k = 0; k < 2; k++) {
        Object[] r = (Object[]) results.get(k);
        io.vertx.core.AsyncResult<?> outcome = (io.vertx.core.AsyncResult<?>) r[0];
        String what = k == 0 ? "upload" : "download";
        assertTrue(outcome.failed(), what + ": the buffer was freed under it");
        assertEquals(FailureCode.NOT_FOUND, ((CudaException) outcome.cause()).code(), outcome.cause().getMessage());
        assertEquals(1, ((AtomicInteger) r[1]).get(), what + ": its future completed once");
        assertTrue((Long) r[2] <= before, what + ": no lent buffer left held when it failed: " + r[2] + " > " + before);
      }
      ctx.completeNow();
    })));
  }

  // One transfer of 12 chunks with its buffer freed from {@code other} at once: [outcome, answers, held then].
  private Future<Object[]> freedUnder(DeviceClient client, io.vertx.core.Context other, boolean up, int tries) {
    int n = 12 * CHUNK / 4;
    AtomicInteger answers = new AtomicInteger();
    return client.alloc(DType.F32, n).compose(h -> {
      Future<?> transfer = up ? client.upload(h, new float[n]) : client.downloadFloats(h);
      transfer.onComplete(x -> answers.incrementAndGet());
      other.runOnContext(v -> client.free(h));
      return transfer.transform(ar -> {
        long held = device.heldTransferBytes();
        if (ar.succeeded() && tries > 1) {
          return freedUnder(client, other, up, tries - 1);
        }
        return Future.succeededFuture(new Object[] {ar, answers, held});
      });
    });
  }

  /**
   * Process isolation with a 16 MiB region, which may lend 8 MiB at once: downloads of 24 MiB (and
   * uploads) go through it in bounded pieces, byte-equal, and nothing stays held.
   */
  @Tag("runs-once") // pins its isolation: one pass covers it
  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void aDownloadLargerThanTheRegionLendsGoesInPieces(Vertx vertx, VertxTestContext ctx) {
    int n = 6 << 20; // 24 MiB of floats
    float[] a = new float[n];
    for (int k = 0; k < n; k++) {
      a[k] = k - 0.5f;
    }
    ByteBuffer direct = ByteBuffer.allocateDirect(n * 4);
    DeviceOptions options = TestDevices.options().setIsolation(Isolation.PROCESS).setSharedMemorySize(16 << 20);
    deploy(vertx, options).compose(client -> client.alloc(DType.F32, n).compose(h -> client.upload(h, a)
      .compose(x -> Future.all(client.downloadFloats(h), client.downloadInto(h, direct), client.download(h)))))
      .onComplete(ctx.succeeding(all -> ctx.verify(() -> {
        assertTrue(Arrays.equals(a, all.resultAt(0)), "downloadFloats");
        FloatBuffer f = direct.order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
        Buffer whole = all.resultAt(2);
        assertEquals(n * 4, whole.length());
        for (int k = 0; k < n; k++) {
          assertEquals(Float.floatToRawIntBits(a[k]), Float.floatToRawIntBits(f.get(k)), "downloadInto " + k);
          if (whole.getIntLE(k * 4) != Float.floatToRawIntBits(a[k])) {
            throw new AssertionError("download: element " + k);
          }
        }
        assertEquals(0, device.heldTransferBytes() - com.vertxcuda.device.memory.HostBufferPool.shared().lentBytes(),
          "nothing of the region stays held");
        ctx.completeNow();
      })));
  }

  /**
   * A region so small that the pump moves one chunk at a time (a 512 KiB region lends 384 KiB: 64 KiB
   * chunks, a window of one): an upload of several chunks still goes, after its range probe, and
   * comes back byte-equal (the probe held the window's one place, and no chunk started after it came
   * back: the upload waited for good, and so did every later request of its caller).
   */
  @Tag("runs-once") // pins its isolation: one pass covers it
  @Test
  @Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
  void anUploadThroughAOneChunkWindowCompletes(Vertx vertx, VertxTestContext ctx) {
    int n = 40 << 10; // 160 KiB of floats: three 64 KiB chunks
    float[] a = new float[n];
    for (int k = 0; k < n; k++) {
      a[k] = k + 0.25f;
    }
    DeviceOptions options = TestDevices.options().setIsolation(Isolation.PROCESS).setSharedMemorySize(512 << 10);
    deploy(vertx, options).compose(client -> client.alloc(DType.F32, n)
        .compose(h -> client.upload(h, a).compose(x -> client.downloadFloats(h))))
      .onComplete(ctx.succeeding(back -> ctx.verify(() -> {
        assertArrayEquals(bits(a), bits(back), "160 KiB through a one-chunk window");
        ctx.completeNow();
      })));
  }

  /**
   * A heap {@code Buffer} (and a direct one the device did not lend) larger than the region goes
   * through the same pump as arrays: uploaded byte-equal through a 16 MiB region, downloaded back as
   * one Buffer, and a fill made right after the upload, without awaiting it, lands after all of it.
   */
  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void heapAndDirectBuffersLargerThanTheRegionGoThroughThePump(Vertx vertx, VertxTestContext ctx) {
    int bytes = 40 << 20;
    Buffer heap = Buffer.buffer(bytes);
    Random random = new Random(7);
    byte[] pattern = new byte[bytes];
    random.nextBytes(pattern);
    heap.setBytes(0, pattern);
    ByteBuffer nio = ByteBuffer.allocateDirect(bytes);
    nio.put(pattern).flip();
    Buffer direct = com.vertxcuda.internal.VertxInternals.buffer(io.netty.buffer.Unpooled.wrappedBuffer(nio));
    DeviceOptions options = TestDevices.options().setSharedMemorySize(16 << 20);
    deploy(vertx, options).compose(client -> client.alloc(DType.U8, bytes).compose(h -> {
      Future<BufferHandle> up = client.upload(h, heap);
      // Made at once after the upload: it must land on top of every chunk of it.
      Future<BufferHandle> fill = client.fill(h.view(bytes - 16, 16), 0x5a);
      return Future.all(up, fill).compose(x -> client.download(h)).compose(first ->
        client.upload(h, direct).compose(x -> client.download(h)).map(second -> List.of(first, second)));
    })).onComplete(ctx.succeeding(both -> ctx.verify(() -> {
      Buffer first = both.get(0);
      assertEquals(bytes, first.length());
      for (int k = 0; k < bytes - 16; k += 4093) {
        assertEquals(pattern[k], first.getByte(k), "heap upload, byte " + k);
      }
      for (int k = bytes - 16; k < bytes; k++) {
        assertEquals((byte) 0x5a, first.getByte(k), "the fill made after the upload, byte " + k);
      }
      Buffer second = both.get(1);
      assertEquals(Buffer.buffer(pattern), second, "direct upload, then download");
      ctx.completeNow();
    })));
  }

  /**
   * A Buffer over several pieces (what a download from another node answers: a composite of heap
   * arrays) uploads through the pump read piece by piece, values across the pieces' edges included.
   */
  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void aBufferOverSeveralPiecesUploadsThroughThePump(Vertx vertx, VertxTestContext ctx) {
    int piece = (3 << 20) + 5; // odd sizes: floats straddle the edges
    byte[][] pieces = new byte[3][piece];
    Random random = new Random(11);
    for (byte[] p : pieces) {
      random.nextBytes(p);
    }
    int bytes = 3 * piece - 3; // a multiple of 4: the last piece one float short of full
    pieces[2] = Arrays.copyOf(pieces[2], piece - 3);
    Buffer composite = com.vertxcuda.internal.VertxInternals.buffer(io.netty.buffer.Unpooled.wrappedBuffer(3, pieces));
    assertEquals(3, com.vertxcuda.internal.VertxInternals.byteBuf(composite).nioBufferCount());
    DeviceOptions options = TestDevices.options().setSharedMemorySize(16 << 20);
    deploy(vertx, options).compose(client -> client.alloc(DType.F32, bytes / 4)
        .compose(h -> client.upload(h, composite).compose(x -> client.download(h))))
      .onComplete(ctx.succeeding(back -> ctx.verify(() -> {
        assertEquals(composite, back, "the pieces' bytes, in order");
        ctx.completeNow();
      })));
  }

  /**
   * Uploads sent as single requests (not through a typed client's pump) with heap bytes larger than
   * the device copies inline: each takes a region slot no larger than itself, so sixteen 8 MiB ones
   * at once fit a 256 MiB region (a slot of an eighth of the region each ran it out: QUEUE_FULL).
   */
  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void concurrentSingleRequestHeapUploadsFitTheRegion(Vertx vertx, VertxTestContext ctx) {
    int bytes = 8 << 20;
    int n = 16;
    DeviceOptions options = TestDevices.options().setSharedMemorySize(256L << 20);
    deploy(vertx, options).compose(client -> {
      com.vertxcuda.internal.RequestSender sender = new com.vertxcuda.internal.RequestSender(vertx, client.address(), 60_000);
      List<Future<BufferHandle>> handles = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        handles.add(client.alloc(DType.U8, bytes));
      }
      return Future.all(handles).compose(all -> {
        List<Future<Object>> uploads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          byte[] data = new byte[bytes];
          Arrays.fill(data, (byte) (i + 1));
          uploads.add(sender.request(new com.vertxcuda.message.UploadRequest(all.resultAt(i), Buffer.buffer(data))));
        }
        return Future.all(uploads).compose(x -> {
          List<Future<Buffer>> downloads = new ArrayList<>();
          for (int i = 0; i < n; i++) {
            downloads.add(client.download(((BufferHandle) all.resultAt(i)).view(bytes - 4, 4)));
          }
          return Future.all(downloads);
        });
      });
    }).onComplete(ctx.succeeding(all -> ctx.verify(() -> {
      for (int i = 0; i < n; i++) {
        assertEquals((byte) (i + 1), all.<Buffer>resultAt(i).getByte(3), "upload " + i);
      }
      ctx.completeNow();
    })));
  }

  private <A> Future<A> roundTrip(DeviceClient client, DType dtype, int n, Function<BufferHandle, Future<BufferHandle>> up,
                                  Function<BufferHandle, Future<A>> down) {
    return client.alloc(dtype, n).compose(h -> up.apply(h).compose(down).compose(back -> client.free(h).map(back)));
  }

  private static Object check(VertxTestContext ctx, Runnable assertions) {
    ctx.verify(assertions::run);
    return null;
  }

  private static int[] bits(float[] a) {
    int[] out = new int[a.length];
    for (int k = 0; k < a.length; k++) {
      out[k] = Float.floatToRawIntBits(a[k]);
    }
    return out;
  }
}
