package com.vertxcuda.device.context;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Requests claim their buffers in the order they were numbered, across verticles (threads). */
class RequestSequencerTest {

  private static CompletableFuture<Void> enterLater(RequestSequencer s, long seq, Object owner) {
    return CompletableFuture.runAsync(() -> s.enter(seq, owner));
  }

  @Test
  void aLaterRequestWaitsForTheEarlierOnesOfOtherVerticles() throws Exception {
    RequestSequencer s = new RequestSequencer();
    Object blas = new Object();
    Object fft = new Object();
    s.enter(1, blas);
    CompletableFuture<Void> second = enterLater(s, 2, fft);
    assertThrows(TimeoutException.class, () -> second.get(200, TimeUnit.MILLISECONDS));
    s.done(1);
    second.get(2, TimeUnit.SECONDS);
  }

  @Test
  void aHeldRequestLetsOnlyItsOwnVerticlePass() throws Exception {
    RequestSequencer s = new RequestSequencer();
    Object blas = new Object();
    Object fft = new Object();
    s.enter(1, blas);
    s.hold(1, blas); // a GEMM waiting for its batch
    s.enter(2, blas); // the same verticle's next request passes
    s.done(2);
    CompletableFuture<Void> fftRequest = enterLater(s, 3, fft);
    assertThrows(TimeoutException.class, () -> fftRequest.get(200, TimeUnit.MILLISECONDS));
    s.done(1); // the batch is queued
    fftRequest.get(2, TimeUnit.SECONDS);
  }

  @Test
  void aNumberThatNeverArrivesStopsNoOneForLong() throws Exception {
    RequestSequencer s = new RequestSequencer();
    long t0 = System.currentTimeMillis();
    s.enter(2, new Object()); // #1 was lost with a stalled context
    long waited = System.currentTimeMillis() - t0;
    assertTrue(waited >= RequestSequencer.WAIT_LIMIT_MILLIS - 50 && waited < RequestSequencer.WAIT_LIMIT_MILLIS + 1000,
      "waited " + waited + " ms");
    s.done(2);
    CompletableFuture<Void> third = enterLater(s, 3, new Object());
    third.get(1, TimeUnit.SECONDS);
    assertFalse(third.isCompletedExceptionally());
  }

  @Test
  void unnumberedRequestsNeverWait() {
    RequestSequencer s = new RequestSequencer();
    s.enter(0, new Object());
    s.done(0);
  }
}
