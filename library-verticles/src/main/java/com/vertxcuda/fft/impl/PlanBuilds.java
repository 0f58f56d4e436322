package com.vertxcuda.fft.impl;

/**
 * Bytes of FFT plans being made, or made and not yet taken into the plan cache, bounded by the plan
 * budget: a preparation reserves its plan's estimated bytes here before it builds, waiting (on its
 * preparation thread) while other builds hold the room, so plans made at once cannot together
 * exhaust the memory they live in (on the host backend, this JVM's heap). One build is always let
 * through, however large, so a plan past the budget is still made (alone). Thread-safe.
 */
final class PlanBuilds {

  private final long limit;
  private long held;

  PlanBuilds(long limit) {
    this.limit = Math.max(0, limit);
  }

  /** Waits until {@code bytes} fit beside the builds in flight, then holds them. Preparation thread. */
  synchronized void reserve(long bytes) throws InterruptedException {
    while (held > 0 && held + bytes > limit) {
      wait();
    }
    held += bytes;
  }

  /** Holds {@code actual} in place of the {@code estimated} bytes reserved, once the plan is made. */
  synchronized void adjust(long estimated, long actual) {
    held += actual - estimated;
    notifyAll();
  }

  /** Gives back what a build held: its plan was taken into the cache, destroyed, or never made. */
  synchronized void release(long bytes) {
    held -= bytes;
    notifyAll();
  }

  /** Bytes held now. */
  synchronized long held() {
    return held;
  }
}
