package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.message.DescribeRequest;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.DeviceState;
import com.vertxcuda.message.FaultRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static com.vertxcuda.device.TestDevices.floats;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The device tier's promises under overflow, poisoning and undeploy: one reply per request. */
@ExtendWith(VertxExtension.class)
class SupervisionTest {

  /** Counts replies per request, so a second reply (or a missing one) shows. */
  static class ReplyLedger {
    final AtomicInteger sent = new AtomicInteger();
    final AtomicInteger replies = new AtomicInteger();
    final Map<FailureCode, AtomicInteger> failures = new java.util.concurrent.ConcurrentHashMap<>();
    final AtomicInteger successes = new AtomicInteger();

    <T> Future<T> track(Future<T> request) {
      sent.incrementAndGet();
      AtomicInteger mine = new AtomicInteger();
      return request.andThen(ar -> {
        assertEquals(1, mine.incrementAndGet(), "a request completed twice");
        replies.incrementAndGet();
        if (ar.succeeded()) {
          successes.incrementAndGet();
        } else {
          FailureCode code = ((CudaException) ar.cause()).code();
          failures.computeIfAbsent(code, k -> new AtomicInteger()).incrementAndGet();
        }
      });
    }

    int failed(FailureCode code) {
      AtomicInteger n = failures.get(code);
      return n == null ? 0 : n.get();
    }

    /** Failures of every code together. */
    int failed() {
      return failures.values().stream().mapToInt(AtomicInteger::get).sum();
    }
  }

  /** Waits until the device's address answers (its consumers are registered early in start). */
  static Future<DeviceInfo> describeWhenListening(Vertx vertx, String address) {
    return vertx.eventBus().<DeviceInfo>request(address, new DescribeRequest()).map(Message::body)
      .recover(t -> {
        Promise<DeviceInfo> p = Promise.promise();
        vertx.setTimer(10, id -> describeWhenListening(vertx, address).onComplete(p));
        return p.future();
      });
  }

  @Test
  void queueOverflowWhileTheContextStarts(Vertx vertx, VertxTestContext ctx) {
    DeviceOptions options = TestDevices.options().setPendingQueueCapacity(4).setOpenDelay(1500);
    Future<String> deployed = TestDevices.deploy(vertx, options);
    DeviceClient c = DeviceClient.create(vertx);
    ReplyLedger ledger = new ReplyLedger();
    describeWhenListening(vertx, c.address()).compose(info -> {
      assertEquals(DeviceState.STARTING, info.getState());
      List<Future<BufferHandle>> requests = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        requests.add(ledger.track(c.alloc(DType.F32, 16)));
      }
      // The overflow is answered at once, while the context is still starting.
      return Future.join(requests).otherwiseEmpty().map(x -> {
        assertFalse(deployed.isComplete() && requests.stream().allMatch(Future::succeeded));
        return requests;
      });
    }).compose(requests -> deployed.map(id -> requests)).onComplete(ctx.succeeding(requests -> ctx.verify(() -> {
      assertEquals(10, ledger.replies.get());
      assertEquals(6, ledger.failed(FailureCode.QUEUE_FULL));
      assertEquals(4, ledger.successes.get());
      long first = requests.stream().filter(Future::succeeded).findFirst().orElseThrow().result().generation();
      for (Future<BufferHandle> r : requests) {
        if (r.succeeded()) {
          assertEquals(first, r.result().generation(), "all served by the first context");
        }
      }
      ctx.completeNow();
    })));
  }

  @Test
  void poisoningRebuildsTheContextUnderLoad(Vertx vertx, VertxTestContext ctx) {
    assumeTrue(TestDevices.poisonRebuilds(), TestDevices.POISON_ENDS_CUDA);
    DeviceClient c = DeviceClient.create(vertx);
    ReplyLedger ledger = new ReplyLedger();
    List<DeviceEvent> events = new ArrayList<>();
    Promise<DeviceEvent> changed = Promise.promise();
    c.events(e -> {
      events.add(e);
      if (e.getType() == DeviceEvent.Type.GENERATION_CHANGED) {
        changed.tryComplete(e);
      }
    });
    float[] data = new float[4096];
    for (int i = 0; i < data.length; i++) {
      data[i] = i;
    }
    TestDevices.deploy(vertx, TestDevices.options()).compose(id -> c.alloc(DType.F32, data.length))
      .compose(old -> c.upload(old, floats(data)).compose(x -> {
        List<Future<?>> load = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
          load.add(ledger.track(c.download(old)));
          load.add(ledger.track(c.alloc(DType.F64, 100)));
          if (i == 20) {
            load.add(ledger.track(TestDevices.fault(vertx, c.address(), FaultRequest.Kind.POISON)));
          }
        }
        return Future.join(load).otherwiseEmpty().compose(y -> changed.future()).map(e -> old);
      }))
      .compose(old -> {
        DeviceEvent e = changed.future().result();
        assertEquals(old.generation(), e.getOldGeneration());
        assertEquals(old.generation() + 1, e.getNewGeneration());
        assertTrue(e.getReason().contains("CUDA_ERROR_ILLEGAL_ADDRESS"), e.getReason());
        // Old handles are stale; new work runs on the next generation.
        return FailureCodesTest.expectFailure(FailureCode.STALE_HANDLE, c.download(old))
          .compose(x -> c.alloc(DType.F32, 4))
          .compose(h -> {
            assertEquals(old.generation() + 1, h.generation());
            return c.upload(h, floats(9, 8, 7, 6)).compose(y -> c.download(h));
          })
          .compose(b -> {
            assertArrayEquals(new float[] {9, 8, 7, 6}, floats(b));
            return c.stats();
          });
      })
      .onComplete(ctx.succeeding(stats -> ctx.verify(() -> {
        assertEquals(ledger.sent.get(), ledger.replies.get(), "every request got exactly one reply");
        assertEquals(101, ledger.sent.get());
        assertTrue(ledger.failed(FailureCode.CONTEXT_LOST) >= 1, "the poison request itself fails");
        assertEquals(ledger.sent.get(), ledger.successes.get() + ledger.failed(FailureCode.CONTEXT_LOST)
          + ledger.failed(FailureCode.STALE_HANDLE), "no other failure kinds: " + ledger.failures);
        assertEquals(changed.future().result().getNewGeneration(), stats.getGeneration());
        assertEquals(1, events.stream().filter(ev -> ev.getType() == DeviceEvent.Type.GENERATION_CHANGED).count());
        ctx.completeNow();
      })));
  }

  @Test
  void restartBudgetSpentMeansLost(Vertx vertx, VertxTestContext ctx) {
    assumeTrue(TestDevices.poisonRebuilds(), TestDevices.POISON_ENDS_CUDA);
    DeviceClient c = DeviceClient.create(vertx);
    Promise<DeviceEvent> lost = Promise.promise();
    c.events(e -> {
      if (e.getType() == DeviceEvent.Type.LOST) {
        lost.tryComplete(e);
      }
    });
    TestDevices.deploy(vertx, TestDevices.options().setRestartLimit(2).setRestartWindow(60_000))
      .compose(id -> poisonAndWait(vertx, c))
      .compose(x -> poisonAndWait(vertx, c))
      .compose(x -> {
        TestDevices.fault(vertx, c.address(), FaultRequest.Kind.POISON);
        return lost.future();
      })
      .compose(e -> {
        assertTrue(e.getReason().contains("restart budget"), e.getReason());
        return FailureCodesTest.expectFailure(FailureCode.CONTEXT_LOST, c.alloc(DType.F32, 1));
      })
      .compose(x -> c.describe())
      .onComplete(ctx.succeeding(info -> ctx.verify(() -> {
        assertEquals(DeviceState.LOST, info.getState());
        ctx.completeNow();
      })));
  }

  // Poisons the context and waits for the next generation.
  private static Future<Void> poisonAndWait(Vertx vertx, DeviceClient c) {
    Promise<Void> done = Promise.promise();
    io.vertx.core.eventbus.MessageConsumer<DeviceEvent> sub = c.events(e -> {
      if (e.getType() == DeviceEvent.Type.GENERATION_CHANGED) {
        done.tryComplete();
      }
    });
    sub.completion().onSuccess(x -> TestDevices.fault(vertx, c.address(), FaultRequest.Kind.POISON));
    return done.future().andThen(x -> sub.unregister());
  }

  @Test
  void undeployAnswersEverythingPending(Vertx vertx, VertxTestContext ctx) {
    DeviceOptions options = TestDevices.options().setOpenDelay(1000);
    Future<String> deployed = TestDevices.deploy(vertx, options);
    DeviceClient c = DeviceClient.create(vertx);
    ReplyLedger ledger = new ReplyLedger();
    List<Future<?>> queued = new ArrayList<>();
    describeWhenListening(vertx, c.address())
      .compose(info -> {
        for (int i = 0; i < 5; i++) {
          queued.add(ledger.track(c.alloc(DType.F32, 8)));
        }
        return deployed;
      })
      .compose(id -> {
        // Now stall the context and leave requests in flight, then undeploy.
        TestDevices.fault(vertx, c.address(), FaultRequest.Kind.STALL);
        // (Stats would be answered ahead of the stall: control requests skip queued work.)
        for (int i = 0; i < 5; i++) {
          queued.add(ledger.track(c.alloc(DType.F32, 8)));
        }
        Promise<String> later = Promise.promise();
        vertx.setTimer(100, t -> later.complete(id));
        return later.future();
      })
      .compose(vertx::undeploy)
      .compose(x -> Future.join(queued).otherwiseEmpty())
      .onComplete(ctx.succeeding(x -> ctx.verify(() -> {
        assertEquals(10, ledger.replies.get());
        assertEquals(5, ledger.successes.get());
        assertEquals(5, ledger.failed(FailureCode.CONTEXT_LOST));
        ctx.completeNow();
      })));
  }
}
