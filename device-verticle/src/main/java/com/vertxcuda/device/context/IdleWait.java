package com.vertxcuda.device.context;

import com.vertxcuda.device.DeviceOptions;

/**
 * How a hand-off thread on the request path — a context's submission thread, its completion thread
 * on the cuda backend, a link's reader, on either side of the link — waits when it has nothing to
 * do: the one place that decides between spinning, yielding and blocking.
 *
 * <p>After its last activity it spins for {@code spinNanos} (the next request, or the answer,
 * usually follows at once). While work it handed on is still outstanding (on the GPU, or across the
 * link) it does not block either: the answer comes whenever the work ends, and the caller's next
 * request follows it by one round trip, so a thread blocked meanwhile would be woken twice on the
 * critical path. On the reference H200 host a wake-up from a park or a {@code select} took 60–130 µs;
 * with a 1 ms cap on that wait, one-at-a-time GEMM 8192 took 90 µs more through the context tier
 * than through the context, and 290 µs more in process isolation. So it spins on, up to
 * {@link #AWAIT_NANOS} of quiet, and blocks past that, when one wake-up no longer matters.
 *
 * <p>That spin does not yield on a host of {@link #QUIET_CORES} cores or more: a yielding thread can
 * wait out the slice of whatever took its core. On the H100 host (16 cores, b294fe8) yielding one
 * step in 256 cost the ops that outlast the first spin: the context tier over the context alone was
 * +30 µs on one-at-a-time FFT 2^24 and +17 µs on RNG 2^28, against +9 and +4 µs with the spin
 * covering the whole op (a 2 ms spin, no yield); through the client FFT 320.8 → 304.4 µs and RNG
 * 404.2 → 381.7 µs in-process, FFT 364.5 → 327.7 µs in process isolation. (Yielding at every step
 * had measured worse still on the H200 host: FFT in process isolation 368 µs against 321.) On a
 * smaller host, where the spinning thread may share its core with an event loop or a heartbeat,
 * every {@link #YIELD_EVERY}th step still yields, so such a thread runs within tens of microseconds.
 */
public final class IdleWait {

  /** While work is outstanding, a thread spins for up to this long after its last activity before it blocks. */
  public static final long AWAIT_NANOS = 20_000_000;
  /** While work is outstanding, one step in this many yields the core (about every 20–50 µs), on a smaller host. */
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
   * ({@link DeviceOptions#getCallerWake}), in ns; 0 (the default): never. Off by default until the
   * H200 hop table measures it (not yet run there). Only on Vert.x's native transport
   * ({@code nativeTransport}): its loops wait on a timer of nanosecond precision, whereas the NIO
   * loop rounds a wait to whole milliseconds and polls without sleeping for one under half a
   * millisecond — a wake every 50 µs would make it spin until the answer came (a whole core per
   * waiting loop, measured on the dev VM), which no event loop may do.
   */
  public static long callerWakeNanos(DeviceOptions options, boolean nativeTransport) {
    return nativeTransport ? Math.max(0, options.getCallerWake()) * 1_000L : 0;
  }

  /**
   * How long an event loop of {@code PollingTransport.create()} polls for a local answer after a
   * request (or its last answer), µs. On a host of {@link #QUIET_CORES} cores or more: as long as a
   * hand-off thread spins while work is outstanding ({@link #AWAIT_NANOS}), so the answer to a
   * one-at-a-time FFT, RNG or GEMM (0.3–2.5 ms) finds its caller's loop awake, as it finds the
   * device's own threads (and as CUDA's synchronize spins its caller's thread). A loop polling only
   * the first 100 µs slept through those and took a wake-up on the answer's path: on the H100 host
   * (da93a1d, the hop table's {@code poll20000} variant against the default's 100 µs) one-at-a-time FFT
   * 2^24 / RNG 2^28 / TF32 GEMM 8192 took 294.4 / 376.8 / 2424.8 µs in-process and 315.6 / 387.1 /
   * 2451.5 in process isolation, against 288.5 / 364.8 / 2410.5 and 302.8 / 374.3 / 2437.1 polling
   * 20 ms. On a smaller host, 100 µs: short operations only, since a polling loop there takes a core
   * the device's threads or the host backend need.
   */
  public static int callerPollMicros() {
    return YIELDS ? 100 : (int) (AWAIT_NANOS / 1_000);
  }

  /**
   * One step of an event loop polling for an answer due to it instead of sleeping
   * ({@code PollingTransport}): on a host of fewer than {@link #QUIET_CORES} cores, one step in
   * {@link #YIELD_EVERY} yields the core, as a spinning hand-off thread's does. (Yielding at every step
   * cost the answer's hop 3–5 µs more on the two-core dev VM, NIO: 5.1–7.5 µs p50 against 2.4.)
   */
  public static void pollStep() {
    if (YIELDS && java.util.concurrent.ThreadLocalRandom.current().nextInt(YIELD_EVERY) == 0) {
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
   * before answering false the mark is read again. With both, the context tier's extra over the
   * context alone went from +15.1 to +7.5 µs per one-at-a-time FFT 2^24 and from +9.5 to +0.8 µs per
   * RNG 2^28 (H100, c91bc53 → 2b1de41: a wake-up in some of them before).
   */
  public static boolean pause(long spinNanos, java.util.function.LongSupplier lastActivity,
                              java.util.function.BooleanSupplier awaiting) {
    if (spinNanos <= 0) {
      return false;
    }
    return step(spinNanos, System.nanoTime() - lastActivity.getAsLong(), awaiting)
      || System.nanoTime() - lastActivity.getAsLong() < spinNanos;
  }

  private static boolean step(long spinNanos, long quietNanos, java.util.function.BooleanSupplier awaiting) {
    if (quietNanos < spinNanos) {
      Thread.onSpinWait();
      return true;
    }
    if (quietNanos < AWAIT_NANOS && awaiting.getAsBoolean()) {
      if (YIELDS && java.util.concurrent.ThreadLocalRandom.current().nextInt(YIELD_EVERY) == 0) {
        Thread.yield();
      } else {
        Thread.onSpinWait();
      }
      return true;
    }
    return false;
  }
}
