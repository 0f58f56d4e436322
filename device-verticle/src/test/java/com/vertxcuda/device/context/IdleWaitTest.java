package com.vertxcuda.device.context;

import com.vertxcuda.device.DeviceOptions;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class IdleWaitTest {

  @Test
  void spinsThenYieldsWhileWorkIsOutstandingThenBlocks() {
    AtomicInteger asked = new AtomicInteger();
    long spin = 200_000;
    // Within the spin it never asks whether work is outstanding (that may cost a volatile read or more).
    assertTrue(IdleWait.pause(spin, 10_000, () -> { asked.incrementAndGet(); return false; }));
    assertEquals(0, asked.get());
    // Past the spin: it goes on (yielding) only while work is outstanding, for a GEMM of milliseconds too.
    assertTrue(IdleWait.pause(spin, 3_000_000, () -> true));
    assertFalse(IdleWait.pause(spin, 3_000_000, () -> false));
    // Past the cap it blocks even so: one wake-up no longer matters.
    assertFalse(IdleWait.pause(spin, IdleWait.AWAIT_NANOS, () -> true));
  }

  @Test
  void withoutSpinItBlocksAtOnce() {
    assertFalse(IdleWait.pause(0, 0, () -> true));
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
