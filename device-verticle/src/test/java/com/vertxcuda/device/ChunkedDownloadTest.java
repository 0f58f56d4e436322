package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.internal.LoopGaps;
import com.vertxcuda.internal.VertxInternals;
import io.netty.buffer.ByteBuf;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code download(handle)} of a range larger than the device may lend at once, with a transfer budget
 * too small for its landing ({@code transferBudget} lowered to {@link #BUDGET}): it comes back in
 * pieces into heap arrays of about 32 MiB, each made on a copy thread, as one composite Buffer —
 * never one new array of the whole range, which the JVM zeroes in one piece without a safepoint poll,
 * stopping every thread (the caller's loop too) that reaches a safepoint meanwhile. The Buffer holds
 * what was uploaded, its slices read right across the arrays' edges, it uploads again as it is, and
 * the device's lent memory and budget are all back once it is done. In the execution's isolation mode
 * (both executions run it).
 */
@ExtendWith(VertxExtension.class)
class ChunkedDownloadTest {

  /** The device's transfer budget: what it may lend at once, and no room for the download's landing. */
  private static final long BUDGET = 16L << 20;
  /** Bytes downloaded: past the budget, over several of the heap arrays (32 MiB less 64 bytes each). */
  private static final int BYTES = (80 << 20) + 4_104;
  /** Bytes of one array of the composite, at most (the remote side channel's, HostElements.SEGMENT). */
  private static final int ARRAY = (32 << 20) - 64;

  private DeviceVerticle device;

  private Future<DeviceClient> deploy(Vertx vertx) {
    device = new DeviceVerticle(TestDevices.options().setTransferBudget(BUDGET));
    return vertx.deployVerticle(device).map(id -> DeviceClient.create(vertx));
  }

  private static Buffer pattern(int bytes, long seed) {
    byte[] b = new byte[bytes];
    new Random(seed).nextBytes(b);
    return Buffer.buffer(b);
  }

  /**
   * The Buffer is one composite of arrays of at most 32 MiB (one array of it all: one piece), equal to
   * what was uploaded, sliced across an array's edge and at its end; it uploads whole and as a slice
   * into a view, and the bytes come back equal; nothing lent or charged is held after.
   */
  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void aDownloadPastTheBudgetIsOneCompositeOfBoundedArraysThatReadsSlicesAndUploads(Vertx vertx, VertxTestContext ctx) {
    Buffer data = pattern(BYTES, 50);
    deploy(vertx).compose(c -> Future.all(c.alloc(DType.U8, BYTES), c.alloc(DType.U8, BYTES)).compose(both -> {
      BufferHandle h = both.resultAt(0);
      BufferHandle again = both.resultAt(1);
      return c.upload(h, data).compose(x -> c.download(h)).compose(back -> {
        assertEquals(BYTES, back.length());
        ByteBuf buf = VertxInternals.byteBuf(back);
        int arrays = (BYTES + ARRAY - 1) / ARRAY;
        assertEquals(arrays, buf.nioBufferCount(), "one piece per array of about 32 MiB, not one array of it all");
        for (ByteBuffer piece : buf.nioBuffers()) {
          assertTrue(piece.remaining() <= ARRAY, "a piece of " + piece.remaining() + " bytes");
        }
        assertTrue(data.equals(back), "the bytes came back equal");
        // A slice across the first two arrays' edge, and one inside the last.
        Buffer edge = back.slice(ARRAY - 4_000, ARRAY + 4_000);
        assertTrue(data.slice(ARRAY - 4_000, ARRAY + 4_000).equals(edge), "a slice across two arrays reads right");
        assertEquals(data.getLongLE(BYTES - 8), back.slice(BYTES - 16, BYTES).getLongLE(8));
        assertEquals(0, device.heldTransferBytes(), "every chunk the device lent was given back");
        assertEquals(0, device.chargedTransferBytes(), "nothing of the budget is held for a landing on the heap");
        // The composite uploads as it is, whole and a slice of it into a view.
        BufferHandle view = again.view(ARRAY - 4_000, 8_000);
        return c.upload(again, back).compose(x -> c.fill(view, 0))
          .compose(x -> c.upload(view, edge.slice(0, 8_000)))
          .compose(x -> c.download(again));
      }).compose(up -> {
        assertTrue(data.equals(up), "uploaded from the downloaded Buffer and its slice, the bytes came back equal");
        return Future.all(c.free(h), c.free(again));
      });
    })).onComplete(ctx.succeeding(x -> ctx.verify(() -> {
      assertEquals(0, device.heldTransferBytes(), "nothing lent is held");
      assertEquals(0, device.chargedTransferBytes(), "the budget is whole");
      ctx.completeNow();
    })));
  }

  /**
   * A 1 ms timer on the caller's loop keeps firing while the download runs: no gap past 10 ms beyond
   * what stopped every thread of the JVM at the same time (a plain thread ticking beside the loop
   * measures that: a collector's pause, a safepoint held up, a starved CPU), as in
   * {@code LoopNeverStopsTest}. Whether the landing is one array of the whole range, which holds up
   * every thread while it is zeroed, is the other test's check (the composite's pieces).
   */
  @Tag("alone")
  @Test
  void aTimerOnTheCallersLoopKeepsFiringDuringTheDownload(Vertx vertx) throws Exception {
    DeviceClient c = get(deploy(vertx));
    Buffer data = pattern(BYTES, 51);
    BufferHandle h = get(c.alloc(DType.U8, BYTES));
    get(c.upload(h, data));
    // Once before the window, and the heap collected: the heap has grown to hold a download, so the
    // window's collections are few and short.
    get(c.download(h));
    System.gc();
    long gcBefore = LoopGaps.collectorMillis();
    LoopGaps gaps = new LoopGaps(vertx);
    CompletableFuture<Buffer> done = gaps.during(vertx.getOrCreateContext(), () -> c.download(h));
    Buffer back = done.get(60, TimeUnit.SECONDS);
    long gc = LoopGaps.collectorMillis() - gcBefore;
    System.out.printf("[figure] loop during a %d MiB download past the budget (%s, %s): widest timer gap %.1f ms "
      + "(a plain thread beside it: %.1f ms; the JVM's collectors: %d ms meanwhile)%n", BYTES >> 20,
      TestDevices.backend(), TestDevices.isolation(), gaps.widestMs(), gaps.controlMs(), gc);
    assertTrue(data.equals(back), "the bytes came back equal");
    assertTrue(gaps.widestMs() <= 10 + gaps.controlMs(), "the caller's loop stopped for " + gaps.widestMs()
      + " ms, while a plain thread beside it stopped at most " + gaps.controlMs() + " ms");
    get(c.free(h));
  }

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }
}
