package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.message.DownloadReply;
import com.vertxcuda.message.DownloadRequest;
import com.vertxcuda.message.FaultRequest;
import com.vertxcuda.message.FillRequest;
import com.vertxcuda.message.UploadRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Downloads sent as raw event-bus messages (no typed client) are bounded in bytes by the device's
 * transfer budget: past it they are answered QUEUE_FULL at once, what is admitted arrives whole, and
 * the host memory lent stays within the budget; requests waiting behind a pump count toward
 * maxInFlight and expire at their deadline. In the execution's isolation mode (both executions run it).
 */
@ExtendWith(VertxExtension.class)
class TransferBudgetTest {

  private static final int DOWNLOADS = 32;

  private DeviceVerticle device;

  private Future<DeviceClient> deploy(Vertx vertx, DeviceOptions options) {
    device = new DeviceVerticle(options);
    return vertx.deployVerticle(device).map(id -> DeviceClient.create(vertx));
  }

  /** Each answer to one of the concurrent downloads: the data, or the failure's code. */
  private record Answer(Buffer data, FailureCode code) {
  }

  // DOWNLOADS raw-bus downloads of all of h sent at once; completes when every one is answered.
  private static Future<List<Answer>> downloadsAtOnce(Vertx vertx, String address, BufferHandle h, Runnable onAnswer) {
    List<Future<Answer>> all = new ArrayList<>();
    for (int i = 0; i < DOWNLOADS; i++) {
      all.add(vertx.eventBus().<Object>request(address, new DownloadRequest(h), new DeliveryOptions().setSendTimeout(120_000))
        .transform(ar -> {
          onAnswer.run();
          return Future.succeededFuture(ar.succeeded()
            ? new Answer(((DownloadReply) ar.result().body()).getData(), null)
            : new Answer(null, Failures.codeOf(ar.cause())));
        }));
    }
    return Future.all(all).map(f -> f.<Answer>list());
  }

  /**
   * 32 concurrent 16 MiB downloads of a 64 MiB budget: four are lent (the budget, exactly), the
   * other 28 answered QUEUE_FULL; once the four are released the budget is whole again.
   */
  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void downloadsPastTheBudgetAreAnsweredQueueFull(Vertx vertx, VertxTestContext ctx) {
    int n = 4 << 20; // 16 MiB of floats
    long budget = 64L << 20;
    deploy(vertx, TestDevices.options().setTransferBudget(budget)).compose(c -> c.alloc(DType.F32, n)
      .compose(h -> c.fill(h, 3))
      .compose(h -> downloadsAtOnce(vertx, c.address(), h, () -> { })
        .compose(answers -> {
          long charged = device.chargedTransferBytes();
          List<Buffer> lent = new ArrayList<>();
          int queueFull = 0;
          for (Answer a : answers) {
            if (a.data() != null) {
              lent.add(a.data());
            } else {
              assertEquals(FailureCode.QUEUE_FULL, a.code(), "a download answered other than success or QUEUE_FULL");
              queueFull++;
            }
          }
          assertEquals(4, lent.size(), "downloads lent within the budget");
          assertEquals(DOWNLOADS - 4, queueFull, "downloads past it");
          assertEquals(budget, charged, "the budget is taken by the four lent");
          for (Buffer b : lent) {
            assertEquals(4 * n, b.length());
            for (int i = 0; i < n; i += 4093) {
              assertEquals(3f, b.getFloatLE(4 * i), "element " + i);
            }
            assertTrue(device.releaseTransferBuffer(b), "a download lends memory that goes back");
          }
          assertEquals(0, device.chargedTransferBytes(), "all of the budget back once the four are released");
          // With room again, a download is served.
          return vertx.eventBus().<Object>request(c.address(), new DownloadRequest(h)).map(m -> (DownloadReply) m.body());
        })
        .compose(again -> c.stats().map(s -> {
          assertEquals(3f, again.getData().getFloatLE(4 * (n - 1)));
          assertEquals(DOWNLOADS - 4L, s.getFailuresByCode().get(FailureCode.QUEUE_FULL.name()).longValue());
          return null;
        }))))
      .onComplete(ctx.succeedingThenComplete());
  }

  /**
   * A node's quota below the device's budget: what one node holds is bounded by it, and the
   * refusal names the quota.
   */
  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void aNodeHoldsNoMoreThanItsQuota(Vertx vertx, VertxTestContext ctx) {
    int n = 4 << 20; // 16 MiB of floats
    deploy(vertx, TestDevices.options().setTransferBudget(64L << 20).setOwnerTransferQuota(32L << 20))
      .compose(c -> c.alloc(DType.F32, n).compose(h -> c.fill(h, 5))
        .compose(h -> downloadsAtOnce(vertx, c.address(), h, () -> { }).compose(answers -> {
          List<Buffer> lent = new ArrayList<>();
          for (Answer a : answers) {
            if (a.data() != null) {
              lent.add(a.data());
            } else {
              assertEquals(FailureCode.QUEUE_FULL, a.code());
            }
          }
          assertEquals(2, lent.size(), "downloads within the node's quota");
          assertEquals(5f, lent.get(1).getFloatLE(4 * (n - 1)));
          // A typed client of this node is held to the same quota.
          return c.download(h).transform(ar -> {
            assertTrue(ar.failed(), "a third download while two are held");
            assertEquals(FailureCode.QUEUE_FULL, Failures.codeOf(ar.cause()));
            assertTrue(ar.cause().getMessage().contains("ownerTransferQuota 33554432"), ar.cause().getMessage());
            lent.forEach(device::releaseTransferBuffer);
            return c.download(h);
          });
        })))
      .onComplete(ctx.succeeding(b -> ctx.verify(() -> {
        assertEquals(5f, b.getFloatLE(0), "served again once the two are released");
        ctx.completeNow();
      })));
  }

  @Test
  void theBudgetOptionsSurviveJson() {
    DeviceOptions defaults = new DeviceOptions(new JsonObject());
    assertEquals(DeviceOptions.DEFAULT_TRANSFER_BUDGET, defaults.getTransferBudget());
    assertEquals(4L << 30, defaults.getTransferBudget());
    assertEquals(0, defaults.getOwnerTransferQuota());
    DeviceOptions set = new DeviceOptions(new DeviceOptions().setTransferBudget(3L << 30).setOwnerTransferQuota(1L << 30).toJson());
    assertEquals(3L << 30, set.getTransferBudget());
    assertEquals(1L << 30, set.getOwnerTransferQuota());
    assertEquals(3L << 30, new DeviceOptions(new JsonObject().put("transferBudget", 3L << 30)).getTransferBudget());
  }

  /**
   * The case: 32 concurrent raw-bus downloads of (just under) 2 GiB each, which would take
   * 64 GiB of host memory. One buffer of that size is made, and downloaded 32 times at once under a
   * budget of 2.5 GiB: one download is served, whole, the other 31 are answered QUEUE_FULL, and this
   * JVM's direct memory never grows by more than the budget while they are answered.
   */
  @Test
  @Timeout(value = 300, timeUnit = TimeUnit.SECONDS)
  void thirtyTwoTwoGibDownloadsKeepHostMemoryWithinTheBudget(Vertx vertx, VertxTestContext ctx) {
    long bytes = (1L << 31) - 4096;
    long budget = 5L << 29;
    BufferPoolMXBean direct = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
      .filter(p -> p.getName().equals("direct")).findFirst().orElseThrow();
    AtomicLong base = new AtomicLong();
    AtomicLong peak = new AtomicLong();
    deploy(vertx, TestDevices.options().setTransferBudget(budget).setHostMemory(3L << 30).setRequestTimeout(240_000))
      .compose(c -> c.alloc(DType.U8, bytes)
        .compose(h -> c.fillInteger(h, 0x5A))
        .compose(h -> {
          // The device's buffer (a direct buffer in-process on the host backend) is in the baseline.
          base.set(direct.getMemoryUsed());
          return downloadsAtOnce(vertx, c.address(), h, () -> peak.accumulateAndGet(direct.getMemoryUsed(), Math::max));
        })
        .map(answers -> {
          List<Buffer> lent = new ArrayList<>();
          for (Answer a : answers) {
            if (a.data() != null) {
              lent.add(a.data());
            } else {
              assertEquals(FailureCode.QUEUE_FULL, a.code(), "a download answered other than success or QUEUE_FULL");
            }
          }
          assertEquals(1, lent.size(), "one 2 GiB download fits a 2.5 GiB budget");
          long grew = peak.get() - base.get();
          assertTrue(grew <= budget, "direct memory grew by " + grew + " bytes, past the budget of " + budget);
          Buffer b = lent.get(0);
          assertEquals(bytes, b.length());
          ByteBuffer nio = com.vertxcuda.internal.VertxInternals.byteBuf(b).nioBuffer().order(java.nio.ByteOrder.LITTLE_ENDIAN);
          long expected = 0x5A5A5A5A5A5A5A5AL;
          for (int i = 0; i < bytes; i += 8) {
            if (nio.getLong(i) != expected) {
              throw new AssertionError("bytes " + i + "..+8 read " + Long.toHexString(nio.getLong(i)));
            }
          }
          assertTrue(device.releaseTransferBuffer(b));
          assertEquals(0, device.chargedTransferBytes(), "the budget is whole once the download is released");
          return null;
        }))
      .onComplete(ctx.succeedingThenComplete());
  }

  /**
   * Requests from the event bus that wait behind a pump (a large upload whose chunks a stalled
   * context never takes) count toward maxInFlight, so those past it are answered QUEUE_FULL at once,
   * and each of the others is answered TIMEOUT at its own deadline, not when the pump ends.
   */
  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  @Tag("alone")
  void requestsWaitingBehindAPumpAreCountedAndExpire(Vertx vertx, VertxTestContext ctx) {
    int maxInFlight = 16;
    int fills = 40;
    long deadline = 500;
    // A small budget keeps the pump's ring to one 64 KiB chunk, so it stops at its first.
    DeviceOptions options = TestDevices.options().setMaxInFlight(maxInFlight).setTransferBudget(256 << 10)
      .setHeartbeatTimeout(120_000).setRequestTimeout(120_000);
    int n = 1 << 18; // 1 MiB of floats: pumped from the bus
    deploy(vertx, options).compose(c -> Future.all(c.alloc(DType.F32, n), c.alloc(DType.F32, 16)).compose(both -> {
      BufferHandle big = both.resultAt(0);
      BufferHandle small = both.resultAt(1);
      TestDevices.fault(vertx, c.address(), FaultRequest.Kind.STALL);
      vertx.eventBus().request(c.address(), new UploadRequest(big, Buffer.buffer(new byte[4 * n])),
        new DeliveryOptions().setSendTimeout(120_000));
      // The stall, the upload and the pump's one chunk are in flight once the pump has sent it.
      return loadReaches(vertx, c, 3).compose(before -> {
        List<Future<Object[]>> answers = new ArrayList<>();
        for (int i = 0; i < fills; i++) {
          long sent = System.nanoTime();
          answers.add(vertx.eventBus().request(c.address(), FillRequest.of(small, i),
              new DeliveryOptions().setSendTimeout(60_000).addHeader(RequestSender.TIMEOUT_HEADER, Long.toString(deadline)))
            .transform(ar -> Future.succeededFuture(new Object[] {ar.succeeded() ? null : Failures.codeOf(ar.cause()),
              (System.nanoTime() - sent) / 1_000_000})));
        }
        // Once the last fill is answered (QUEUE_FULL, at once) every fill has arrived.
        return answers.get(fills - 1).compose(last -> c.describe()).compose(during -> Future.all(answers).compose(all -> c.describe().map(after -> {
          int queueFull = 0;
          int timedOut = 0;
          for (Object[] a : all.<Object[]>list()) {
            long millis = (Long) a[1];
            if (a[0] == FailureCode.QUEUE_FULL) {
              queueFull++;
              assertTrue(millis < deadline, "QUEUE_FULL at once, not after " + millis + " ms");
            } else {
              assertEquals(FailureCode.TIMEOUT, a[0], "a fill behind the pump answered other than TIMEOUT or QUEUE_FULL");
              timedOut++;
              assertTrue(millis >= deadline && millis < deadline + 2_000, "TIMEOUT at its deadline, not after "
                + millis + " ms");
            }
          }
          assertEquals(fills - (maxInFlight - before), (long) queueFull, "fills past maxInFlight, those waiting counted");
          assertEquals(maxInFlight - before, (long) timedOut, "fills that waited behind the pump");
          assertEquals((long) maxInFlight, during.getLoad(), "the waiting fills count in the device's load");
          assertEquals((long) before, after.getLoad(), "expired fills no longer count");
          return null;
        })));
      });
    })).onComplete(ctx.succeedingThenComplete());
  }

  // The device's load once it has reached {@code load} (asked again every 10 ms until it has).
  private static Future<Long> loadReaches(Vertx vertx, DeviceClient c, long load) {
    return c.describe().compose(info -> info.getLoad() >= load ? Future.succeededFuture(info.getLoad())
      : vertx.timer(10).compose(x -> loadReaches(vertx, c, load)));
  }
}
