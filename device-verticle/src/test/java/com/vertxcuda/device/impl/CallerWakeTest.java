package com.vertxcuda.device.impl;

import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A local caller's event loop wakes itself while its request is unanswered, stops once the answer
 * has run on it, gives up after a long wait, and nothing of it happens off the loop's thread.
 */
@ExtendWith(VertxExtension.class)
class CallerWakeTest {

  private static final long INTERVAL = 50_000;

  @Test
  void theLoopWakesItselfUntilTheAnswerRunsOnIt(Vertx vertx, VertxTestContext test) {
    Context caller = vertx.getOrCreateContext();
    Promise<Object> promise = Promise.promise();
    AtomicReference<InFlight.Answer> answer = new AtomicReference<>();
    AtomicReference<CallerWake> wake = new AtomicReference<>();
    caller.runOnContext(v -> {
      answer.set(InFlight.Answer.of(promise, caller, INTERVAL));
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
  void aRequestNeverAnsweredStopsTheWakesAfterTheAwaitLimit(Vertx vertx, VertxTestContext test) {
    Context caller = vertx.getOrCreateContext();
    caller.runOnContext(v -> {
      CallerWake wake = CallerWake.begin(caller, INTERVAL);
      test.verify(() -> assertTrue(wake.ticking()));
      vertx.setTimer(200, t -> test.verify(() -> {
        assertFalse(wake.ticking(), "past 20 ms without an answer one late wake-up no longer matters");
        // A new request on the loop starts the wakes again.
        CallerWake again = CallerWake.begin(caller, INTERVAL);
        assertSame(wake, again, "one per loop");
        assertTrue(again.ticking());
        again.end();
        again.end();
        test.completeNow();
      }));
    });
  }

  @Test
  void offTheLoopOrWithoutAnIntervalNothingBegins(Vertx vertx, VertxTestContext test) {
    Context loop = vertx.getOrCreateContext();
    assertNull(CallerWake.begin(loop, INTERVAL), "this test's thread is not the loop's");
    loop.runOnContext(v -> test.verify(() -> {
      assertNull(CallerWake.begin(loop, 0), "no interval: no wakes");
      vertx.executeBlocking(() -> CallerWake.begin(Vertx.currentContext(), INTERVAL))
        .onComplete(test.succeeding(w -> test.verify(() -> {
          assertNull(w, "a worker is not woken");
          test.completeNow();
        })));
    }));
  }
}
