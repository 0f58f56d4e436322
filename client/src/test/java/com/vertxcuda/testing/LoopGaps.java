package com.vertxcuda.testing;

import io.vertx.core.Vertx;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How long an event loop stopped: the widest gap of a 1 ms periodic timer on it, beside the widest
 * gap of a plain thread ticking every 1 ms (a control: what stops every thread of the JVM — a
 * collector's pause, a safepoint held up, a starved CPU — stops it too, and is not the code under
 * test's doing). Made off the loop; {@link #tick} starts the timer on the loop.
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

  /** On the loop to watch: its 1 ms timer starts now. Returns the timer's id. */
  public long tick() {
    last.set(System.nanoTime());
    timer = vertx.setPeriodic(1, id -> mark());
    return timer;
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
