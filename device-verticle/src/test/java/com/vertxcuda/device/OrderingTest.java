package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.DeviceEvent;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Requests sent without waiting run in the order they were sent, in both isolation modes: the
 * reproductions of the request-path issue, each a test. One submission path per context is what
 * makes these hold; the device host's transfers in chunks hold their buffer for their whole length.
 */
@ExtendWith(VertxExtension.class)
@Tag("runs-once") // every test runs in both isolation modes itself
class OrderingTest {

  private static final int ELEMENTS = 6_000_000; // 24 MiB: in chunks through a 16 MiB region

  private static DeviceOptions options(Isolation isolation) {
    return TestDevices.options().setIsolation(isolation).setSharedMemorySize(16L << 20);
  }

  private static Buffer pattern(int elements, int seed) {
    Random random = new Random(seed);
    Buffer b = Buffer.buffer(elements * 4);
    for (int i = 0; i < elements; i++) {
      b.appendFloatLE(random.nextInt(1 << 20));
    }
    return b;
  }

  private static int differing(Buffer expected, Buffer actual) {
    assertEquals(expected.length(), actual.length());
    int wrong = 0;
    for (int i = 0; i < expected.length(); i += 4) {
      if (expected.getIntLE(i) != actual.getIntLE(i)) {
        wrong++;
      }
    }
    return wrong;
  }

  /** upload(x); copy(x, y); download(y), sent at once: y holds every uploaded element. */
  @ParameterizedTest
  @EnumSource(value = Isolation.class, names = {"IN_PROCESS", "PROCESS"})
  void largeUploadThenCopyReadsWhatWasUploaded(Isolation isolation, Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    Buffer data = pattern(ELEMENTS, 1);
    TestDevices.deploy(vertx, options(isolation))
      .compose(id -> Future.all(c.alloc(DType.F32, ELEMENTS), c.alloc(DType.F32, ELEMENTS)))
      .compose(all -> {
        BufferHandle x = all.resultAt(0);
        BufferHandle y = all.resultAt(1);
        c.upload(x, data);
        c.copy(x, y);
        return c.download(y);
      })
      .onComplete(ctx.succeeding(b -> ctx.verify(() -> {
        assertEquals(0, differing(data, b), "elements of y not from the upload");
        ctx.completeNow();
      })));
  }

  /** download(x); fill(x, 0), sent at once: the download holds x as it was, not zeros. */
  @ParameterizedTest
  @EnumSource(value = Isolation.class, names = {"IN_PROCESS", "PROCESS"})
  void largeDownloadThenFillReadsTheOldContents(Isolation isolation, Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    Buffer data = pattern(ELEMENTS, 2);
    TestDevices.deploy(vertx, options(isolation))
      .compose(id -> c.alloc(DType.F32, ELEMENTS))
      .compose(x -> c.upload(x, data).compose(v -> {
        Future<Buffer> before = c.download(x);
        Future<BufferHandle> zeroed = c.fill(x, 0);
        Future<Buffer> after = c.download(x);
        return Future.all(before, zeroed, after).map(all -> List.<Buffer>of(all.resultAt(0), all.resultAt(2)));
      }))
      .onComplete(ctx.succeeding(both -> ctx.verify(() -> {
        assertEquals(0, differing(data, both.get(0)), "elements of the first download that were not x's");
        assertEquals(0, differing(Buffer.buffer(new byte[ELEMENTS * 4]), both.get(1)), "non-zero after the fill");
        ctx.completeNow();
      })));
  }

  /**
   * From a thread that is not a Vert.x context, fills and downloads sent without waiting keep the
   * order they were made in: each download sees the fill made just before it.
   */
  @ParameterizedTest
  @EnumSource(value = Isolation.class, names = {"IN_PROCESS", "PROCESS"})
  void requestsFromAPlainThreadKeepTheirOrder(Isolation isolation, Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    int rounds = 300;
    TestDevices.deploy(vertx, options(isolation)).compose(id -> c.alloc(DType.F32, 256)).onComplete(ctx.succeeding(x -> {
      Thread plain = new Thread(() -> {
        List<Future<Buffer>> downloads = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
          c.fill(x, i);
          downloads.add(c.download(x));
        }
        Future.all(downloads).onComplete(ctx.succeeding(all -> ctx.verify(() -> {
          for (int i = 0; i < rounds; i++) {
            Buffer b = downloads.get(i).result();
            assertEquals(i, b.getFloatLE(0), "download " + i);
            assertEquals(i, b.getFloatLE(255 * 4), "download " + i);
          }
          ctx.completeNow();
        })));
      }, "not-a-vertx-thread");
      plain.start();
    }));
  }

  /**
   * Undeploying a device with thousands of requests queued answers every one of them, once, within
   * a second: those that did not finish get CONTEXT_LOST.
   */
  @ParameterizedTest
  @EnumSource(value = Isolation.class, names = {"IN_PROCESS", "PROCESS"})
  @Tag("alone")
  void undeployUnderLoadAnswersEveryRequestWithinASecond(Isolation isolation, Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    SupervisionTest.ReplyLedger ledger = new SupervisionTest.ReplyLedger();
    AtomicLong undeployedAt = new AtomicLong();
    AtomicLong lastAnswer = new AtomicLong();
    int requests = 4_000;
    DeviceOptions o = TestDevices.options().setIsolation(isolation);
    TestDevices.deploy(vertx, o).compose(id -> c.alloc(DType.F32, 1 << 14).compose(x -> {
      List<Future<?>> all = new ArrayList<>();
      for (int i = 0; i < requests; i++) {
        Future<?> f = i % 2 == 0 ? c.fill(x, i) : c.download(x);
        all.add(ledger.track(f).andThen(ar -> lastAnswer.accumulateAndGet(System.nanoTime(), Math::max)));
      }
      undeployedAt.set(System.nanoTime());
      Future<Void> undeployed = vertx.undeploy(id);
      return Future.join(all).eventually(() -> undeployed);
    })).onComplete(ar -> ctx.verify(() -> {
      assertEquals(requests, ledger.replies.get());
      assertEquals(requests, ledger.successes.get() + ledger.failed(FailureCode.CONTEXT_LOST),
        "every request either served or CONTEXT_LOST: " + ledger.failures);
      long ms = TimeUnit.NANOSECONDS.toMillis(lastAnswer.get() - undeployedAt.get());
      assertTrue(ms < 1_000, "the last answer came " + ms + " ms after the undeploy");
      ctx.completeNow();
    }));
  }

  /**
   * A context busy with long work is not taken for a stuck one: with a 1.5 s heartbeat timeout,
   * a 256 MiB allocation and more than three seconds of queued fills finish with no generation
   * change (the heartbeat asks whether the submission thread turns, not whether the queue is empty).
   */
  @ParameterizedTest
  @EnumSource(value = Isolation.class, names = {"IN_PROCESS", "PROCESS"})
  @Tag("alone")
  void aBusyContextIsNotReplaced(Isolation isolation, Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    AtomicInteger changes = new AtomicInteger();
    DeviceOptions o = options(isolation).setHeartbeatInterval(100).setHeartbeatTimeout(750)
      .setHostMemory(1L << 30);
    long started = System.nanoTime();
    TestDevices.deploy(vertx, o).compose(id -> {
      c.events(e -> {
        if (e.getType() != DeviceEvent.Type.READY) {
          changes.incrementAndGet();
        }
      });
      return c.alloc(DType.F32, 64 << 20);
    }).compose(x -> busy(c, x, 0, started).compose(last -> c.download(x.view(0, 1))
      .map(b -> {
        assertEquals(last, b.getFloatLE(0));
        return b;
      }))).onComplete(ctx.succeeding(b -> ctx.verify(() -> {
      assertEquals(0, changes.get(), "the context was replaced while busy");
      assertTrue(System.nanoTime() - started > TimeUnit.MILLISECONDS.toNanos(1_500),
        "the work took too little time to test the heartbeat");
      ctx.completeNow();
    })));
  }

  // Rounds of 20 fills of 256 MiB sent at once, until 3.5 s have passed; the last value filled.
  private static Future<Float> busy(DeviceClient c, BufferHandle x, int round, long started) {
    List<Future<?>> all = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      all.add(c.fill(x, round * 20 + i));
    }
    return Future.all(all).compose(v -> System.nanoTime() - started > TimeUnit.MILLISECONDS.toNanos(1_750)
      ? Future.succeededFuture((float) (round * 20 + 19)) : busy(c, x, round + 1, started));
  }
}
