package com.vertxcuda.internal;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pump every bulk transfer runs on: units staged out of order leave in order, at most a window
 * at once; after the first failure nothing more leaves, what was staged goes back, and it reports
 * once, on its context, only when nothing is staged or sent any more.
 */
class PumpTest {

  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** A pump whose units are staged and sent by the test, by hand. */
  private final class Manual {
    final List<Long> staging = new ArrayList<>();
    final List<Long> sent = new ArrayList<>();
    final Set<Buffer> given = Collections.newSetFromMap(new IdentityHashMap<>());
    final AtomicInteger lefts = new AtomicInteger();
    final AtomicReference<Throwable> leftWith = new AtomicReference<>();
    final CompletableFuture<Throwable> done = new CompletableFuture<>();
    final AtomicReference<Context> doneOn = new AtomicReference<>();
    final AtomicInteger dones = new AtomicInteger();
    final Context context = vertx.getOrCreateContext();
    final Pump pump;
    int most;

    Manual(long units, int window, boolean recycle) {
      pump = new Pump(units, window, recycle, k -> {
        staging.add(k);
        most = Math.max(most, staging.size() + sent.size());
      }, (k, b) -> sent.add(k), given::add, context, t -> {
        lefts.incrementAndGet();
        leftWith.set(t);
      }, t -> {
        dones.incrementAndGet();
        doneOn.set(Vertx.currentContext());
        done.complete(t);
      });
    }

    void stage(long k, Buffer b) {
      staging.remove(k);
      pump.staged(k, b, null);
    }

    void finish(long k, Buffer b, Throwable error) {
      sent.remove(k);
      pump.sent(k, b, error);
    }

    // What it reported, on its context, once.
    Throwable reported() throws Exception {
      Throwable t = done.get(10, TimeUnit.SECONDS);
      assertSame(context, doneOn.get());
      Thread.sleep(50);
      assertEquals(1, dones.get(), "it reports once");
      return t;
    }
  }

  @Test
  void unitsStagedOutOfOrderLeaveInOrderWithinTheWindow() throws Exception {
    Manual m = new Manual(6, 3, true);
    m.pump.start();
    assertEquals(List.of(0L, 1L, 2L), m.staging);
    Buffer b2 = Buffer.buffer("2");
    m.stage(2, b2);
    m.stage(1, Buffer.buffer("1"));
    assertTrue(m.sent.isEmpty(), "nothing leaves before unit 0");
    Buffer b0 = Buffer.buffer("0");
    m.stage(0, b0);
    assertEquals(List.of(0L, 1L, 2L), m.sent);
    m.finish(0, b0, null);
    assertEquals(List.of(3L), m.staging, "a done unit frees a place in the window");
    assertSame(b0, m.pump.reuse(), "its buffer fills a later unit");
    for (long k = 1; k < 3; k++) {
      m.finish(k, k == 2 ? b2 : Buffer.buffer(), null);
    }
    for (long k = 3; k < 6; k++) {
      m.stage(k, Buffer.buffer());
    }
    assertEquals(1, m.lefts.get(), "every unit has left");
    assertNull(m.leftWith.get());
    assertEquals(0, m.dones.get());
    for (long k = 3; k < 6; k++) {
      m.finish(k, Buffer.buffer(), null);
    }
    assertNull(m.reported());
    assertTrue(m.given.contains(b2), "what it kept for later units goes back when it reports");
    assertEquals(3, m.most);
  }

  @Test
  void theFirstFailureDropsWhatIsStagedAndReportsOnceNothingIsInFlight() throws Exception {
    Manual m = new Manual(10, 4, true);
    m.pump.start();
    Buffer b0 = Buffer.buffer("0");
    Buffer b2 = Buffer.buffer("2");
    Buffer b3 = Buffer.buffer("3");
    m.stage(0, b0);
    m.stage(2, b2);
    m.stage(3, b3);
    assertEquals(List.of(0L), m.sent);
    IllegalStateException first = new IllegalStateException("first");
    m.finish(0, b0, first);
    assertSame(first, m.leftWith.get(), "the caller's place goes at the first failure");
    assertTrue(m.given.containsAll(List.of(b0, b2, b3)), "staged units are dropped, their buffers given back");
    assertTrue(m.sent.isEmpty());
    assertEquals(List.of(1L), m.staging, "no unit starts after a failure");
    m.pump.fail(new IllegalStateException("second"));
    Thread.sleep(50);
    assertEquals(0, m.dones.get(), "unit 1 is still being staged");
    Buffer b1 = Buffer.buffer("1");
    m.stage(1, b1);
    assertTrue(m.given.contains(b1));
    assertSame(first, m.reported());
    assertEquals(1, m.lefts.get());
  }

  @Test
  void aGateHoldsEverySendAndAPlaceInTheWindow() throws Exception {
    Manual m = new Manual(3, 2, false);
    m.pump.block();
    m.pump.start();
    assertEquals(List.of(0L), m.staging, "the gate takes one of the two places");
    m.stage(0, Buffer.buffer());
    assertTrue(m.sent.isEmpty());
    m.pump.unblock(null);
    assertEquals(List.of(0L), m.sent);
    assertEquals(List.of(1L), m.staging);
    m.finish(0, Buffer.buffer(), null);
    m.stage(1, Buffer.buffer());
    m.stage(2, Buffer.buffer());
    m.finish(1, Buffer.buffer(), null);
    m.finish(2, Buffer.buffer(), null);
    assertNull(m.reported());
    assertEquals(3, m.given.size(), "a pump that does not recycle gives each buffer back once done");
  }

  @Test
  void unitsStagedAndSentWithinItsOwnCallsReportOutsideThem() throws Exception {
    AtomicReference<Pump> self = new AtomicReference<>();
    AtomicInteger sent = new AtomicInteger();
    CompletableFuture<Throwable> done = new CompletableFuture<>();
    Context context = vertx.getOrCreateContext();
    Pump pump = new Pump(100, 4, true, k -> {
      Buffer reused = self.get().reuse();
      self.get().staged(k, reused != null ? reused : Buffer.buffer(), null);
    }, (k, b) -> {
        sent.incrementAndGet();
        self.get().sent(k, b, null);
      }, b -> { }, context, t -> assertTrue(!Thread.holdsLock(self.get())), done::complete);
    self.set(pump);
    pump.start();
    assertNull(done.get(10, TimeUnit.SECONDS));
    assertEquals(100, sent.get());
  }
}
