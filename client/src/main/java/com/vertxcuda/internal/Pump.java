package com.vertxcuda.internal;

import io.vertx.core.Context;
import io.vertx.core.buffer.Buffer;

import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * The windowed pump every bulk transfer runs on: a transfer's units 0 to n-1 (chunks, views,
 * segments), at most a window of them at once, each staged (filled on the copy threads, read from
 * a device, received from a stream), then sent in unit order, then done. What differs between
 * transfers is given: how a unit is staged ({@link Source}), how it is sent and when it is done
 * ({@link Sink}), and where a buffer goes back ({@code giveBack}).
 *
 * <p>Units start in order while fewer than the window are active (started and not done); they may
 * finish staging out of order, and each is sent only once every unit before it has been, under the
 * pump's lock, whichever thread staged it. A done unit's buffer fills a later unit when the pump
 * recycles them (an upload's ring), and goes back otherwise. The first failure is the pump's: no
 * unit starts or is sent after it, and units staged but not sent are dropped, their buffers given
 * back. A gate ({@link #block}) takes a place in the window and holds every send until it opens
 * (an upload's range probe).
 *
 * <p>It reports twice, once each: {@code left} when every unit has been sent or at the first
 * failure (with it), on the thread that got it there (a transfer gives up its place in its caller's
 * order then); {@code done} when every unit is done or, after a failure, when no unit is being
 * staged or sent any more, in a task of its own on the given context (never on a caller's stack).
 * By then every buffer has gone back: the ones it recycles, too.
 *
 * <p>Any thread: its state is kept under its lock, and what it reports is reported outside it.
 */
final class Pump {

  /** How a unit is staged. */
  @FunctionalInterface
  interface Source {
    /**
     * Stages unit {@code k}, which has just started, and calls {@link #staged} once, from any
     * thread, possibly within this call. Runs under the pump's lock: anything slow goes elsewhere.
     */
    void stage(long k);
  }

  /** How a unit is sent, and done. */
  @FunctionalInterface
  interface Sink {
    /**
     * Sends unit {@code k}, staged as {@code payload}; units are sent in order, under the pump's
     * lock. Calls {@link #sent} once, when the unit is done (its device has it, its bytes are read or
     * written), from any thread.
     */
    void send(long k, Buffer payload);
  }

  private final long units;
  private final int window;
  private final Source source;
  private final Sink sink;
  /** Whether a done unit's buffer fills a later unit (kept in {@link #idle}) instead of going back. */
  private final boolean recycle;
  private final Consumer<Buffer> giveBack;
  private final Context context;
  private final Consumer<Throwable> left;
  private final Consumer<Throwable> done;
  /** Buffers of done units, for later ones ({@link #reuse}); given back when the pump reports. */
  private final ArrayDeque<Buffer> idle = new ArrayDeque<>();
  /**
   * Units staged and not yet sent, at {@code k % window}: the units between the next to send and the
   * next to start are all active, so fewer than the window, and no two share a slot.
   */
  private final Buffer[] ready;
  private final boolean[] staged;
  private long nextStart;
  private long nextSend;
  private long completed;
  /** Units started and not done (being staged, staged, sent), and an open gate. */
  private int active;
  private boolean blocked;
  private volatile boolean failed;
  private Throwable cause;
  private boolean leftReported;
  private boolean reported;

  /**
   * A pump of {@code units} units, at most {@code window} at once; {@code recycle}: a done unit's
   * buffer fills a later one. {@code done} runs on {@code context}.
   */
  Pump(long units, int window, boolean recycle, Source source, Sink sink, Consumer<Buffer> giveBack,
       Context context, Consumer<Throwable> left, Consumer<Throwable> done) {
    this.units = units;
    this.window = Math.max(1, window);
    this.recycle = recycle;
    this.source = source;
    this.sink = sink;
    this.giveBack = giveBack;
    this.context = context;
    this.left = left;
    this.done = done;
    this.ready = new Buffer[this.window];
    this.staged = new boolean[this.window];
  }

  /** Starts the first units. */
  void start() {
    synchronized (this) {
      pump();
    }
    settle();
  }

  /** Takes a place in the window and holds every send until {@link #unblock}: before {@link #start}. */
  synchronized void block() {
    blocked = true;
    active++;
  }

  /** The gate is open ({@code error} null: units are sent from now on) or failed the pump. */
  void unblock(Throwable error) {
    synchronized (this) {
      active--;
      blocked = false;
      if (error != null) {
        fail0(error);
      } else {
        // The gate's place in the window is free now (a window of one started no unit meanwhile).
        pump();
      }
    }
    settle();
  }

  /** A buffer a done unit left, for the unit being staged; null if none. */
  synchronized Buffer reuse() {
    return idle.poll();
  }

  /** Whether the pump has failed: a unit being staged may stop early (and still call {@link #staged}). */
  boolean failed() {
    return failed;
  }

  /** Unit {@code k} is staged as {@code payload} (null: nothing to carry), or failed to be ({@code error}). */
  void staged(long k, Buffer payload, Throwable error) {
    synchronized (this) {
      if (failed || error != null) {
        back(payload);
        active--;
        if (error != null) {
          fail0(error);
        }
      } else {
        int slot = (int) (k % window);
        ready[slot] = payload;
        staged[slot] = true;
        drain();
      }
    }
    settle();
  }

  /** Unit {@code k}, sent as {@code payload}, is done, or failed ({@code error}). */
  void sent(long k, Buffer payload, Throwable error) {
    synchronized (this) {
      active--;
      if (error == null && !failed) {
        completed++;
        if (recycle && payload != null) {
          idle.push(payload);
        } else {
          back(payload);
        }
        pump();
      } else {
        back(payload);
        if (error != null) {
          fail0(error);
        }
      }
    }
    settle();
  }

  /** Fails the pump from outside (its transfer was cut); the first failure wins. */
  void fail(Throwable t) {
    synchronized (this) {
      fail0(t);
    }
    settle();
  }

  // Under the lock: starts units while the window has room, then sends what is ready.
  private void pump() {
    while (!failed && nextStart < units && active < window) {
      long k = nextStart++;
      active++;
      source.stage(k);
    }
    drain();
  }

  // Under the lock: sends staged units in order.
  private void drain() {
    while (!failed && !blocked && nextSend < nextStart) {
      int slot = (int) (nextSend % window);
      if (!staged[slot]) {
        return;
      }
      Buffer payload = ready[slot];
      ready[slot] = null;
      staged[slot] = false;
      sink.send(nextSend++, payload);
    }
  }

  private void back(Buffer b) {
    if (b != null) {
      giveBack.accept(b);
    }
  }

  // Under the lock: the first failure wins; staged units are never sent, and their buffers go back.
  private void fail0(Throwable t) {
    if (failed) {
      return;
    }
    cause = t;
    failed = true;
    for (long k = nextSend; k < nextStart; k++) {
      int slot = (int) (k % window);
      if (staged[slot]) {
        back(ready[slot]);
        ready[slot] = null;
        staged[slot] = false;
        active--;
      }
    }
  }

  // Reports what is due, outside the lock; within a call that holds it (a unit staged or sent from
  // within the pump's own call) the outermost call reports once it has let go.
  private void settle() {
    if (Thread.holdsLock(this)) {
      return;
    }
    Throwable leftWith;
    boolean leaving;
    synchronized (this) {
      leaving = !leftReported && (failed || nextSend == units);
      leftReported |= leaving;
      leftWith = cause;
    }
    if (leaving) {
      left.accept(leftWith);
    }
    Throwable failure;
    synchronized (this) {
      if (reported || active > 0 || !failed && completed < units) {
        return;
      }
      reported = true;
      failure = cause;
      for (Buffer b : idle) {
        giveBack.accept(b);
      }
      idle.clear();
    }
    context.runOnContext(v -> done.accept(failure));
  }
}
