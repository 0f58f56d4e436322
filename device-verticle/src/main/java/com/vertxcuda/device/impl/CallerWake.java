package com.vertxcuda.device.impl;

import com.vertxcuda.CudaException;
import com.vertxcuda.device.context.InFlight;
import com.vertxcuda.device.spi.IdleWait;
import com.vertxcuda.internal.VertxInternals;
import io.vertx.core.Context;
import io.vertx.core.Promise;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Keeps an event loop that waits for a local answer awake for it, in one of two ways, both only while
 * a request made on the loop is unanswered:
 * <ul>
 *   <li><b>polling</b>, on a loop of a {@link com.vertxcuda.device.PollingTransport}: for up to its poll
 *   time after the request (or the loop's last answer) the loop looks for I/O and tasks without
 *   sleeping, so the answer's task runs as soon as it is queued — no wake-up of a sleeping thread
 *   (an {@code eventfd} write, a scheduler wake-up: for a small fill, longer than the fill itself);</li>
 *   <li><b>waking</b> ({@code DeviceOptions.callerWake}): the loop wakes itself every
 *   {@code intervalNanos} (a Netty timer on the loop), so the answer's wake-up finds a core that slept
 *   for at most that long: the hop to a sleeping loop grows with how long it has slept, so work
 *   of hundreds of microseconds to milliseconds pays more for it than a small fill does.</li>
 * </ul>
 * A loop polls for the time its transport was made with: by default as long as the device's own
 * hand-off threads spin for outstanding work ({@link IdleWait#callerPollMicros}), so an answer to work
 * of up to 20 ms finds it awake; the wakes are for loops that do not poll.
 *
 * <p>One per loop thread, touched only on that thread: {@link #begin} where the request is admitted
 * on the caller's loop (elsewhere, or on a loop neither polling nor waking, nothing is done),
 * {@link #end} in the answer's task on the same loop, {@link #pollNow} from the loop's select strategy.
 * The ticks stop when nothing is unanswered, or after {@link IdleWait#AWAIT_NANOS} with no answer
 * (one late wake-up no longer matters then).
 */
public final class CallerWake {

  private static final ThreadLocal<CallerWake> ON_THIS_LOOP = new ThreadLocal<>();

  private final ScheduledExecutorService loop;
  /** How often the loop wakes itself while waiting; 0: it does not. */
  private final long intervalNanos;
  /** How long after a request (or an answer) the loop polls rather than sleeps; 0: it does not poll. */
  private final long pollNanos;
  private final Runnable tick = this::tick;
  private int unanswered;
  private boolean ticking;
  private long lastChange;
  private long ticks;
  private long polls;

  private CallerWake(ScheduledExecutorService loop, long intervalNanos, long pollNanos) {
    this.loop = loop;
    this.intervalNanos = Math.max(0, intervalNanos);
    this.pollNanos = Math.max(0, pollNanos);
  }

  /**
   * The answer to a local caller: {@code promise} completes on {@code caller}, the caller's
   * context, in a task of its own, so never on the stack of whoever answers (a refusal is answered
   * on the caller's own thread). Made on the caller's event loop, that loop keeps awake for the
   * answer: it polls for up to {@code pollNanos} (its transport polls), and wakes itself every
   * {@code wakeNanos} until the answer runs (0: neither).
   */
  public static InFlight.Answer answer(Promise<Object> promise, Context caller, long wakeNanos, long pollNanos) {
    CallerWake wake = begin(caller, wakeNanos, pollNanos);
    return new InFlight.Answer() {
      @Override
      public void succeed(Object body) {
        caller.runOnContext(v -> {
          if (wake != null) {
            wake.end();
          }
          promise.complete(body);
        });
      }

      @Override
      public void fail(CudaException failure) {
        caller.runOnContext(v -> {
          if (wake != null) {
            wake.end();
          }
          promise.fail(failure);
        });
      }
    };
  }

  /**
   * A request made on {@code caller} is admitted: if this is its event loop's thread, and that loop
   * polls ({@code pollNanos}, its {@link PollingTransportImpl}'s poll time) or wakes itself
   * ({@code intervalNanos}), the loop keeps awake for its answer until {@link #end}. Null when nothing
   * was begun.
   */
  static CallerWake begin(Context caller, long intervalNanos, long pollNanos) {
    if (intervalNanos <= 0 && pollNanos <= 0) {
      return null;
    }
    ScheduledExecutorService loop = VertxInternals.currentEventLoop(caller);
    if (loop == null) {
      return null;
    }
    CallerWake wake = ON_THIS_LOOP.get();
    if (wake == null) {
      // One per loop, with the interval and poll time of the device that first used it (devices of
      // one Vert.x share its transport; of one JVM, the defaults).
      wake = new CallerWake(loop, intervalNanos, pollNanos);
      ON_THIS_LOOP.set(wake);
    }
    wake.unanswered++;
    wake.lastChange = System.nanoTime();
    if (!wake.ticking && wake.intervalNanos > 0) {
      wake.ticking = true;
      loop.schedule(wake.tick, wake.intervalNanos, TimeUnit.NANOSECONDS);
    }
    return wake;
  }

  /** The request's answer runs now, on the loop's thread. */
  void end() {
    unanswered--;
    lastChange = System.nanoTime();
  }

  /**
   * Whether the polling loop should look for its answer again now rather than sleep: a request made
   * on it is unanswered and the last request or answer was under its poll time ago. Called by the
   * loop's select strategy whenever it has no task to run.
   */
  boolean pollNow() {
    if (unanswered <= 0 || System.nanoTime() - lastChange >= pollNanos) {
      return false;
    }
    polls++;
    IdleWait.pollStep();
    return true;
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

  /** How long the loop polls after a request or answer, ns (for tests). */
  long pollNanos() {
    return pollNanos;
  }

  /** How often the loop looked for its answer instead of sleeping (for tests). */
  long polls() {
    return polls;
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
