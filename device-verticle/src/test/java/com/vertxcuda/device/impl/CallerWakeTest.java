package com.vertxcuda.device.impl;

import com.vertxcuda.device.context.InFlight;
import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.TestDevices;
import com.vertxcuda.device.spi.IdleWait;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A local caller's event loop wakes itself while its request is unanswered, sleeping between the
 * wakes, stops once the answer has run on it, gives up after a long wait, and nothing of it happens
 * off the loop's thread; on Vert.x's NIO transport, whose loop would spin instead, it is off. The
 * loops here run the native transport (epoll), as the option requires.
 */
@ExtendWith(VertxExtension.class)
@Tag("alone")
@Tag("runs-once") // the wakes are the caller's loop's, before and after the device: the same in both isolation modes
class CallerWakeTest {

  private static final long INTERVAL = 50_000;

  private Vertx vertx;

  @BeforeEach
  void start() {
    vertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));
    assertTrue(vertx.isNativeTransportEnabled(), "the native transport (netty-transport-native-epoll) is on the "
      + "test classpath: " + vertx.unavailableNativeTransportCause());
  }

  @AfterEach
  void stop() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  void theLoopWakesItselfUntilTheAnswerRunsOnIt(VertxTestContext test) {
    Context caller = vertx.getOrCreateContext();
    Promise<Object> promise = Promise.promise();
    AtomicReference<InFlight.Answer> answer = new AtomicReference<>();
    AtomicReference<CallerWake> wake = new AtomicReference<>();
    caller.runOnContext(v -> {
      answer.set(CallerWake.answer(promise, caller, INTERVAL, 0));
      wake.set(CallerWake.onThisLoop());
      test.verify(() -> {
        assertNotNull(wake.get(), "made on the caller's loop: the loop wakes itself");
        assertTrue(wake.get().ticking());
      });
      // 10 ms later, answered from another thread, as the completion thread does.
      vertx.setTimer(10, t -> new Thread(() -> answer.get().succeed("done")).start());
    });
    promise.future().onComplete(test.succeeding(body -> test.verify(() -> {
      assertEquals("done", body);
      assertSame(caller, Vertx.currentContext(), "answered on the caller's context");
      // Woken every 50 µs for 10 ms: well over a handful, even with timer slack on a loaded host.
      assertTrue(wake.get().ticks() >= 10, "ticks " + wake.get().ticks());
      vertx.setTimer(5, t -> test.verify(() -> {
        assertFalse(wake.get().ticking(), "nothing unanswered: the loop sleeps as it likes");
        long ticks = wake.get().ticks();
        vertx.setTimer(5, t2 -> test.verify(() -> {
          assertEquals(ticks, wake.get().ticks(), "no tick after it stopped");
          test.completeNow();
        }));
      }));
    })));
  }

  @Test
  void aRequestNeverAnsweredStopsTheWakesAfterTheAwaitLimit(VertxTestContext test) {
    Context caller = vertx.getOrCreateContext();
    caller.runOnContext(v -> {
      CallerWake wake = CallerWake.begin(caller, INTERVAL, 0);
      test.verify(() -> assertTrue(wake.ticking()));
      vertx.setTimer(200, t -> test.verify(() -> {
        assertFalse(wake.ticking(), "past 20 ms without an answer one late wake-up no longer matters");
        // A new request on the loop starts the wakes again.
        CallerWake again = CallerWake.begin(caller, INTERVAL, 0);
        assertSame(wake, again, "one per loop");
        assertTrue(again.ticking());
        again.end();
        again.end();
        test.completeNow();
      }));
    });
  }

  @Test
  void offTheLoopOrWithoutAnIntervalNothingBegins(VertxTestContext test) {
    Context loop = vertx.getOrCreateContext();
    assertNull(CallerWake.begin(loop, INTERVAL, 0), "this test's thread is not the loop's");
    loop.runOnContext(v -> test.verify(() -> {
      assertNull(CallerWake.begin(loop, 0, 0), "no interval: no wakes");
      vertx.executeBlocking(() -> CallerWake.begin(Vertx.currentContext(), INTERVAL, 0))
        .onComplete(test.succeeding(w -> test.verify(() -> {
          assertNull(w, "a worker is not woken");
          test.completeNow();
        })));
    }));
  }

  @Test
  void theLoopSleepsBetweenItsWakes(VertxTestContext test) {
    Context caller = vertx.getOrCreateContext();
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    caller.runOnContext(v -> {
      long thread = Thread.currentThread().getId();
      CallerWake wake = CallerWake.begin(caller, INTERVAL, 0);
      long cpu0 = threads.getThreadCpuTime(thread);
      long t0 = System.nanoTime();
      // 100 ms with requests unanswered (a new one every 5 ms, within the wake's 20 ms limit): the
      // loop wakes every 50 µs and sleeps in between.
      int[] begun = {1};
      long more = vertx.setPeriodic(5, t -> {
        CallerWake.begin(caller, INTERVAL, 0);
        begun[0]++;
      });
      vertx.setTimer(100, t -> test.verify(() -> {
        vertx.cancelTimer(more);
        double busy = (threads.getThreadCpuTime(thread) - cpu0) / (double) (System.nanoTime() - t0);
        assertTrue(wake.ticking(), "still unanswered: still waking");
        assertTrue(wake.ticks() >= 200, "ticks " + wake.ticks());
        // The NIO loop measured 98-100 % here (it polls without sleeping for a wait under half a
        // millisecond); epoll about 20 % on the dev VM.
        assertTrue(busy < 0.6, "the loop was busy " + Math.round(busy * 100) + " % of the time");
        for (int i = 0; i < begun[0]; i++) {
          wake.end();
        }
        test.completeNow();
      }));
    });
  }

  @Test
  void onTheNioTransportTheOptionIsOff(VertxTestContext test) {
    DeviceOptions wakeful = new DeviceOptions().setCallerWake(50);
    assertEquals(50_000, IdleWait.callerWakeNanos(wakeful, true));
    assertEquals(0, IdleWait.callerWakeNanos(wakeful, false), "NIO: off");
    // A device on a NIO Vert.x with the option set: a request from an event loop begins no wake.
    Vertx nio = Vertx.vertx();
    assertFalse(nio.isNativeTransportEnabled());
    DeviceClient device = DeviceClient.create(nio);
    Context caller = nio.getOrCreateContext();
    TestDevices.deploy(nio, TestDevices.options().setCallerWake(50))
      .compose(id -> {
        Promise<Object> made = Promise.promise();
        caller.runOnContext(v -> device.alloc(DType.F32, 16).onComplete(ar -> {
          made.complete(CallerWake.onThisLoop());
          if (ar.succeeded()) {
            device.free(ar.result());
          }
        }));
        return made.future();
      })
      .onComplete(ar -> {
        test.verify(() -> assertNull(ar.succeeded() ? ar.result() : ar.cause(), "no wake began on the NIO loop"));
        nio.close().onComplete(c -> test.completeNow());
      });
  }
}
