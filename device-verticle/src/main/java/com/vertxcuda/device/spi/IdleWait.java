package com.vertxcuda.device.spi;

import com.vertxcuda.device.DeviceOptions;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * How a hand-off thread on the request path — a context's submission thread, its completion thread
 * on the cuda backend, a link's reader, on either side of the link — waits when it has nothing to
 * do: the one place that decides between spinning, yielding and blocking.
 *
 * <p>After its last activity it spins for {@code spinNanos} (the next request, or the answer,
 * usually follows at once). While work it handed on is still outstanding (on the GPU, or across the
 * link) it does not block either: the answer comes whenever the work ends, and the caller's next
 * request follows it by one round trip, so a thread blocked meanwhile would be woken twice on the
 * critical path. A wake-up from a park or a {@code select} is slow against a short GPU operation,
 * so a short cap on that wait would add a wake-up to every answer of an operation that outlasts it.
 * So it spins on, up to {@link #AWAIT_NANOS} of quiet, and blocks past that, when one wake-up is
 * small against the wait.
 *
 * <p>That spin does not yield on a host of {@link #QUIET_CORES} cores or more: a yielding thread can
 * wait out the slice of whatever took its core, and that delay lands on the answer of every
 * operation that outlasts the first spin (one-at-a-time FFT, RNG, large GEMM); yielding more often
 * costs more. With cores to spare, nothing else needs the core, so the spin never gives it up. On a
 * smaller host, where the spinning thread may share its core with an event loop or a heartbeat,
 * every {@link #YIELD_EVERY}th step still yields, so such a thread runs within tens of microseconds.
 */
public final class IdleWait {

  /** While work is outstanding, a thread spins for up to this long after its last activity before it blocks. */
  public static final long AWAIT_NANOS = 20_000_000;
  /** While work is outstanding, one step in this many yields the core (every few tens of µs), on a smaller host. */
  static final int YIELD_EVERY = 256;
  /** From this many cores on, a thread spinning while work is outstanding never yields (see above). */
  static final int QUIET_CORES = 8;
  private static final boolean YIELDS = Runtime.getRuntime().availableProcessors() < QUIET_CORES;

  private IdleWait() {
  }

  /**
   * The spin for {@code options}: {@link DeviceOptions#getSubmissionSpin} µs, or by default 200 µs on
   * hosts with 8 or more cores, 50 µs on 4–7 and none on smaller ones, where a spinning thread would
   * take a core from the event loops (a poller of the GPU's work still yields: {@link #pauseAwaiting}).
   */
  public static long spinNanos(DeviceOptions options) {
    if (options.getSubmissionSpin() >= 0) {
      return options.getSubmissionSpin() * 1_000L;
    }
    int cores = Runtime.getRuntime().availableProcessors();
    return cores >= 8 ? 200_000 : cores >= 4 ? 50_000 : 0;
  }

  /**
   * How often an event loop with a local request unanswered wakes itself
   * ({@link DeviceOptions#getCallerWake}), in ns; 0 (the default): never, since its gain over a
   * sleeping loop has not been measured on a GPU host. Only on Vert.x's native transport
   * ({@code nativeTransport}): its loops wait on a timer of nanosecond precision, whereas the NIO
   * loop rounds a wait to whole milliseconds and polls without sleeping for one under half a
   * millisecond — a wake every few tens of microseconds would make it spin until the answer came (a
   * whole core per waiting loop), which no event loop may do.
   */
  public static long callerWakeNanos(DeviceOptions options, boolean nativeTransport) {
    return nativeTransport ? Math.max(0, options.getCallerWake()) * 1_000L : 0;
  }

  /**
   * How long an event loop of {@code PollingTransport.create()} polls for a local answer after a
   * request (or its last answer), µs. On a host of {@link #QUIET_CORES} cores or more: as long as a
   * hand-off thread spins while work is outstanding ({@link #AWAIT_NANOS}), so the answer to a
   * one-at-a-time FFT, RNG or GEMM (up to a few milliseconds) finds its caller's loop awake, as it
   * finds the device's own threads (and as CUDA's synchronize spins its caller's thread). A loop that
   * polled only briefly would sleep through those and take a wake-up on the answer's path (the hop
   * table's {@code poll20000} variant shows the difference; bench/results/INDEX.md). On a smaller
   * host, 100 µs: short operations only, since a polling loop there takes a core the device's threads
   * or the host backend need.
   */
  public static int callerPollMicros() {
    return YIELDS ? 100 : (int) (AWAIT_NANOS / 1_000);
  }

  /**
   * One step of an event loop polling for an answer due to it instead of sleeping
   * ({@code PollingTransport}): on a host of fewer than {@link #QUIET_CORES} cores, one step in
   * {@link #YIELD_EVERY} yields the core, as a spinning hand-off thread's does; yielding at every step
   * would make the answer's hop several times longer.
   */
  public static void pollStep() {
    if (YIELDS && ThreadLocalRandom.current().nextInt(YIELD_EVERY) == 0) {
      Thread.yield();
    }
  }

  /**
   * One step of waiting for work handed on that cannot wake this thread when it ends (the GPU's:
   * its completion is polled), always with work outstanding: as {@link #pause}, but where there is
   * no spin (a host of few cores) it yields at every step until {@link #AWAIT_NANOS} of quiet instead
   * of blocking at once — blocking there means polling on a timer, which would add up to its period
   * to every answer, and a yielding thread gives the core to any event loop that wants it.
   */
  public static boolean pauseAwaiting(long spinNanos, long quietNanos) {
    if (spinNanos > 0) {
      return step(spinNanos, quietNanos, () -> true);
    }
    if (quietNanos < AWAIT_NANOS) {
      Thread.yield();
      return true;
    }
    return false;
  }

  /**
   * One step of waiting: spins (on a small host now and then yielding) and answers true (look for
   * work again), or answers false when the caller should block until woken. {@code lastActivity}:
   * when the thread, or work it handed on, last did something ({@link System#nanoTime}); {@code
   * awaiting}: whether work the thread handed on is still outstanding (asked only past the spin).
   *
   * <p>Work that ends marks its activity before it stops being awaited (the submission thread is
   * touched, then the count of work on the GPU drops; the device host's reply is sent, then the count
   * of answers owed drops). A thread that read the mark before the work ended and the count after
   * would block just as the answer leaves, and the caller's next request would have to wake it; so
   * before answering false the mark is read again: without both, some answers would take a wake-up.
   */
  public static boolean pause(long spinNanos, LongSupplier lastActivity,
                              BooleanSupplier awaiting) {
    if (spinNanos <= 0) {
      return false;
    }
    return step(spinNanos, System.nanoTime() - lastActivity.getAsLong(), awaiting)
      || System.nanoTime() - lastActivity.getAsLong() < spinNanos;
  }

  private static boolean step(long spinNanos, long quietNanos, BooleanSupplier awaiting) {
    if (quietNanos < spinNanos) {
      Thread.onSpinWait();
      return true;
    }
    if (quietNanos < AWAIT_NANOS && awaiting.getAsBoolean()) {
      if (YIELDS && ThreadLocalRandom.current().nextInt(YIELD_EVERY) == 0) {
        Thread.yield();
      } else {
        Thread.onSpinWait();
      }
      return true;
    }
    return false;
  }
}
