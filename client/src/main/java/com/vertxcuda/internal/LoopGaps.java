package com.vertxcuda.internal;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * How long an event loop stopped: the widest gap of a 1 ms periodic timer on it, beside the widest
 * gap of a plain thread ticking every 1 ms (a control: what stops every thread of the JVM — a
 * collector's pause, a safepoint held up, a starved CPU — stops it too, and is not the code under
 * test's doing). Made off the loop; {@link #tick} starts the timer on the loop. For the tests and the
 * benchmark, which watch the loops that call the toolkit; the toolkit itself uses none.
 */
public final class LoopGaps {

  private final Vertx vertx;
  private final AtomicLong last = new AtomicLong(System.nanoTime());
  private final AtomicLong widest = new AtomicLong();
  private final AtomicLong controlWidest = new AtomicLong();
  private final AtomicBoolean stopped = new AtomicBoolean();
  private final Thread control;
  private volatile long timer = -1;

  /** Starts the control thread. */
  public LoopGaps(Vertx vertx) {
    this.vertx = vertx;
    control = new Thread(() -> {
      long prev = System.nanoTime();
      while (!stopped.get()) {
        try {
          Thread.sleep(1);
        } catch (InterruptedException e) {
          return;
        }
        long now = System.nanoTime();
        controlWidest.accumulateAndGet(now - prev, Math::max);
        prev = now;
      }
    }, "loop-control");
    control.setDaemon(true);
    control.start();
  }

  /**
   * On the loop to watch: its 1 ms timer starts now (and a timer started before on another loop
   * stops: the watch moves here). Returns the timer's id.
   */
  public long tick() {
    long before = timer;
    if (before >= 0) {
      vertx.cancelTimer(before);
    }
    last.set(System.nanoTime());
    long id = vertx.setPeriodic(1, t -> {
      if (t == timer) {
        mark();
      }
    });
    timer = id;
    return id;
  }

  /** On the watched loop: the gap up to now counts (the work just done on it, say). */
  public void mark() {
    long now = System.nanoTime();
    widest.accumulateAndGet(now - last.getAndSet(now), Math::max);
  }

  /** Forgets the gaps so far (a warm-up's). */
  public void reset() {
    widest.set(0);
    controlWidest.set(0);
  }

  /**
   * Off the loop: on {@code loop}, starts the timer and then {@code work}, the time its call takes on
   * the loop counted too; the timer stops once the work's future completes, and the returned future
   * completes with it (on the loop: wait for it off the loop).
   */
  public <T> CompletableFuture<T> during(Context loop, Supplier<Future<T>> work) {
    CompletableFuture<T> done = new CompletableFuture<>();
    loop.runOnContext(v -> {
      tick();
      Future<T> f;
      try {
        f = work.get();
      } catch (RuntimeException e) {
        f = Future.failedFuture(e);
      }
      mark();
      f.onComplete(ar -> {
        stop();
        if (ar.succeeded()) {
          done.complete(ar.result());
        } else {
          done.completeExceptionally(ar.cause());
        }
      });
    });
    return done;
  }

  /** Time the JVM's collectors have spent so far, ms (their pauses stop every thread, a loop's too). */
  public static long collectorMillis() {
    return ManagementFactory.getGarbageCollectorMXBeans().stream()
      .mapToLong(GarbageCollectorMXBean::getCollectionTime).filter(t -> t > 0).sum();
  }

  /** Stops the timer and the control thread; the figures stay. */
  public void stop() {
    stopped.set(true);
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
  }

  /** The loop's widest gap, ms. */
  public double widestMs() {
    return widest.get() / 1e6;
  }

  /** The control thread's widest gap, ms. */
  public double controlMs() {
    return controlWidest.get() / 1e6;
  }
}
