package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code downloadFloats} of more than the device lends at once, in many chunks whose copies into the
 * new array are spread over the copy threads: every bit arrives, a fill sent right after it (not
 * awaited) lands after all of it, and a failure mid-way answers once, when nothing of the region is
 * held any more. In process isolation with a 96 MiB region (chunks of 2.25 MiB, each copied in pieces
 * where there are copy threads to take them), and in the execution's own mode with default options.
 */
@ExtendWith(VertxExtension.class)
class LargeDownloadTest {

  /** 128 MiB of floats: more than the small region holds, and many chunks. */
  private static final int N = 32 << 20;

  private DeviceVerticle device;

  private static DeviceOptions smallRegion() {
    return TestDevices.options().setIsolation(Isolation.PROCESS).setSharedMemorySize(96L << 20);
  }

  private Future<DeviceClient> deploy(Vertx vertx, DeviceOptions options) {
    device = new DeviceVerticle(options);
    return vertx.deployVerticle(device).map(id -> DeviceClient.create(vertx));
  }

  @Tag("runs-once") // pins its isolation: one pass covers it
  @Test
  @Timeout(value = 180, timeUnit = TimeUnit.SECONDS)
  void aDownloadLargerThanTheRegionArrivesWholeBeforeAFillSentAfterIt(Vertx vertx, VertxTestContext ctx) {
    downloadThenFill(vertx, ctx, smallRegion());
  }

  @Test
  @Timeout(value = 180, timeUnit = TimeUnit.SECONDS)
  void aDownloadOfManyChunksArrivesWholeBeforeAFillSentAfterIt(Vertx vertx, VertxTestContext ctx) {
    downloadThenFill(vertx, ctx, TestDevices.options());
  }

  private void downloadThenFill(Vertx vertx, VertxTestContext ctx, DeviceOptions options) {
    float[] a = new float[N];
    Random r = new Random(24);
    for (int k = 0; k < N; k++) {
      a[k] = Float.intBitsToFloat(r.nextInt()); // any bits, NaN payloads included
    }
    deploy(vertx, options).compose(client -> client.alloc(DType.F32, N).compose(h -> client.upload(h, a).compose(x -> {
      Future<float[]> down = client.downloadFloats(h);
      Future<BufferHandle> fill = client.fill(h, 7); // sent after the download, not awaited
      return Future.all(down, fill).compose(both -> client.downloadFloats(h.view(N - 4, 4))
        .map(tail -> new Object[] {down.result(), tail}));
    }))).onComplete(ctx.succeeding(out -> ctx.verify(() -> {
      float[] back = (float[]) out[0];
      assertEquals(N, back.length);
      for (int k = 0; k < N; k++) {
        if (Float.floatToRawIntBits(back[k]) != Float.floatToRawIntBits(a[k])) {
          throw new AssertionError("element " + k + " is " + back[k] + ", not " + a[k]
            + (back[k] == 7f ? ": the fill sent after the download overtook its chunk" : ""));
        }
      }
      for (float v : (float[]) out[1]) {
        assertEquals(7f, v, "the fill landed once the download had read everything");
      }
      assertEquals(0, device.heldTransferBytes() - com.vertxcuda.device.memory.HostBufferPool.shared().lentBytes(),
        "nothing of the region stays held");
      ctx.completeNow();
    })));
  }

  /**
   * The buffer freed from another context (in no order with the download) while it is on its way
   * through the small region: one failed future, NOT_FOUND, and by then no slot of the region is
   * held. Should the free land after the whole download, it is tried again with a new buffer.
   */
  @Tag("runs-once") // pins its isolation: one pass covers it
  @Test
  @Timeout(value = 180, timeUnit = TimeUnit.SECONDS)
  void aFailureMidWayAnswersOnceWithNothingOfTheRegionHeld(Vertx vertx, VertxTestContext ctx) {
    Context other = vertx.getOrCreateContext();
    deploy(vertx, smallRegion()).compose(client -> freedUnder(client, other, device.heldTransferBytes(), 5))
      .onComplete(ctx.succeeding(r -> ctx.verify(() -> {
        AsyncResult<?> outcome = (AsyncResult<?>) r[0];
        assertTrue(outcome.failed(), "the buffer was freed under the download");
        assertEquals(FailureCode.NOT_FOUND, ((CudaException) outcome.cause()).code(), outcome.cause().getMessage());
        assertEquals(1, ((AtomicInteger) r[1]).get(), "its future completed once");
        assertTrue((Long) r[2] <= (Long) r[3], "nothing of the region left held when it failed: " + r[2] + " > " + r[3]);
        ctx.completeNow();
      })));
  }

  // A download freed under at once from {@code other}: [outcome, answers, held then, held before].
  private Future<Object[]> freedUnder(DeviceClient client, Context other, long before, int tries) {
    AtomicInteger answers = new AtomicInteger();
    return client.alloc(DType.F32, N).compose(h -> {
      Future<float[]> down = client.downloadFloats(h);
      down.onComplete(x -> answers.incrementAndGet());
      other.runOnContext(v -> client.free(h));
      return down.transform(ar -> {
        long held = device.heldTransferBytes();
        if (ar.succeeded() && tries > 1) {
          return freedUnder(client, other, before, tries - 1);
        }
        return Future.succeededFuture(new Object[] {ar, answers, held, before});
      });
    });
  }
}
