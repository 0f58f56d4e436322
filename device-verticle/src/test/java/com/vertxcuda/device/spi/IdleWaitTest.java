package com.vertxcuda.device.spi;

import com.vertxcuda.device.DeviceOptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Tag("runs-once")
@Tag("alone")
class IdleWaitTest {

  @Test
  void spinsThenYieldsWhileWorkIsOutstandingThenBlocks() {
    AtomicInteger asked = new AtomicInteger();
    long spin = 200_000;
    // Within the spin it never asks whether work is outstanding (that may cost a volatile read or more).
    // (A spin of a second for this look: a cold JVM may take longer than 200 µs to get there.)
    assertTrue(IdleWait.pause(1_000_000_000L, ago(10_000), () -> { asked.incrementAndGet(); return false; }));
    assertEquals(0, asked.get());
    // Past the spin: it goes on (spinning) only while work is outstanding, for a GEMM of milliseconds too.
    assertTrue(IdleWait.pause(spin, ago(3_000_000), () -> true));
    assertFalse(IdleWait.pause(spin, ago(3_000_000), () -> false));
    // Past the cap it blocks even so: one wake-up no longer matters.
    assertFalse(IdleWait.pause(spin, ago(IdleWait.AWAIT_NANOS), () -> true));
  }

  /** A last activity {@code nanos} before now. */
  private static java.util.function.LongSupplier ago(long nanos) {
    long at = System.nanoTime() - nanos;
    return () -> at;
  }

  /**
   * Work ends between the thread's two looks: its activity was marked (the answer left) after the
   * thread read the mark and before it asked whether work is outstanding, which now says no. The
   * thread must not block: the caller's next request follows the answer by one round trip.
   */
  @Test
  void workThatEndsBetweenTheTwoLooksKeepsTheThreadSpinning() {
    // Quiet past a 5 ms spin and well inside the 20 ms during which work outstanding keeps it spinning.
    long[] mark = {System.nanoTime() - 10_000_000};
    boolean goesOn = IdleWait.pause(5_000_000, () -> mark[0], () -> {
      mark[0] = System.nanoTime(); // the work's end: its activity first, then the count drops
      return false;
    });
    assertTrue(goesOn, "blocked just as the answer left");
  }

  @Test
  void withoutSpinItBlocksAtOnce() {
    assertFalse(IdleWait.pause(0, ago(0), () -> true));
    assertEquals(0, IdleWait.spinNanos(new DeviceOptions().setSubmissionSpin(0)));
    assertEquals(75_000, IdleWait.spinNanos(new DeviceOptions().setSubmissionSpin(75)));
  }

  @Test
  void aPollerOfWorkThatCannotWakeItYieldsEvenWithoutSpinUntilTheCap() {
    // No spin (a host of few cores): it yields while the GPU's work is pending, rather than poll on a timer.
    assertTrue(IdleWait.pauseAwaiting(0, 0));
    assertTrue(IdleWait.pauseAwaiting(0, 3_000_000));
    assertFalse(IdleWait.pauseAwaiting(0, IdleWait.AWAIT_NANOS));
    // With a spin, as pause with work outstanding.
    assertTrue(IdleWait.pauseAwaiting(200_000, 10_000));
    assertTrue(IdleWait.pauseAwaiting(200_000, 3_000_000));
    assertFalse(IdleWait.pauseAwaiting(200_000, IdleWait.AWAIT_NANOS));
  }
}
