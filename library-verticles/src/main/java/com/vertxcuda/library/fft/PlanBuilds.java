package com.vertxcuda.library.fft;

/**
 * Bytes of FFT plans outside the plan cache, bounded by the plan budget: plans being made, made and
 * not yet taken, serving one request uncached, or evicted with work still queued. A preparation
 * reserves its plan's estimated bytes here before it builds, waiting (on its preparation thread)
 * while other plans hold the room, so plans made at once, or made faster than their work runs,
 * cannot together exhaust the memory they live in (on the host backend, this JVM's heap). One build
 * is always let through when nothing else is held, however large, so a plan past the budget is
 * still made (alone). Thread-safe.
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

  /** Holds {@code bytes} of a plan that leaves the cache, without waiting (its memory exists already). */
  synchronized void hold(long bytes) {
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
