package com.vertxcuda.device.impl;

import com.vertxcuda.device.context.IdleWait;
import com.vertxcuda.impl.VertxInternals;
import io.vertx.core.Context;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Keeps an event loop that waits for a local answer in a light sleep: while a request it made is
 * unanswered, the loop wakes itself every {@code intervalNanos} (a Netty timer on the loop), so the
 * answer's wake-up finds a core that slept for at most that long.
 *
 * <p>Why: a one-at-a-time caller's loop sleeps through the whole GPU operation, and on the H200 host
 * the hop from the answering thread to that loop grew with the sleep — 10.7 µs over the context
 * tier for a 1 KiB fill, 24–30 µs for FFT 2^24 and RNG 2^28 (~300 µs), 68 µs for a TF32 GEMM 8192
 * (2.5 ms), at 86f10f3 (bench/results) — while every other thread on the path spins
 * ({@link IdleWait}). An event loop must not spin, so it is woken instead.
 *
 * <p>One per loop thread, touched only on that thread: {@link #begin} where the request is admitted
 * on the caller's loop (elsewhere, or with no interval, nothing is done), {@link #end} in the
 * answer's task on the same loop. The ticks stop when nothing is unanswered, or after
 * {@link IdleWait#AWAIT_NANOS} with no answer (one late wake-up no longer matters then).
 */
final class CallerWake {

  private static final ThreadLocal<CallerWake> ON_THIS_LOOP = new ThreadLocal<>();

  private final ScheduledExecutorService loop;
  private final long intervalNanos;
  private final Runnable tick = this::tick;
  private int unanswered;
  private boolean ticking;
  private long lastChange;
  private long ticks;

  private CallerWake(ScheduledExecutorService loop, long intervalNanos) {
    this.loop = loop;
    this.intervalNanos = intervalNanos;
  }

  /**
   * A request made on {@code caller} is admitted: if this is its event loop's thread, the loop wakes
   * every {@code intervalNanos} until {@link #end}. Null when nothing was begun.
   */
  static CallerWake begin(Context caller, long intervalNanos) {
    if (intervalNanos <= 0) {
      return null;
    }
    ScheduledExecutorService loop = VertxInternals.currentEventLoop(caller);
    if (loop == null) {
      return null;
    }
    CallerWake wake = ON_THIS_LOOP.get();
    if (wake == null || wake.loop != loop) {
      // One per loop, at the interval of the device that first woke it (devices of one JVM share defaults).
      wake = new CallerWake(loop, intervalNanos);
      ON_THIS_LOOP.set(wake);
    }
    wake.unanswered++;
    wake.lastChange = System.nanoTime();
    if (!wake.ticking) {
      wake.ticking = true;
      loop.schedule(wake.tick, intervalNanos, TimeUnit.NANOSECONDS);
    }
    return wake;
  }

  /** The request's answer runs now, on the loop's thread. */
  void end() {
    unanswered--;
    lastChange = System.nanoTime();
  }

  /** This loop thread's wake, if one was begun on it (for tests). */
  static CallerWake onThisLoop() {
    return ON_THIS_LOOP.get();
  }

  /** Whether the loop is waking itself now (for tests). */
  boolean ticking() {
    return ticking;
  }

  /** How often the loop woke itself so far (for tests). */
  long ticks() {
    return ticks;
  }

  private void tick() {
    ticks++;
    if (unanswered > 0 && System.nanoTime() - lastChange < IdleWait.AWAIT_NANOS) {
      loop.schedule(tick, intervalNanos, TimeUnit.NANOSECONDS);
    } else {
      ticking = false;
    }
  }
}
