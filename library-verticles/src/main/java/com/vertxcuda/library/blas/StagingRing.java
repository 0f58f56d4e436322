package com.vertxcuda.library.blas;

import com.vertxcuda.device.spi.GpuEvent;

import java.util.ArrayDeque;

/**
 * Offsets in a ring of {@code size} bytes of staging memory, each part held until the event recorded
 * after the work that reads it is reached. The parts of one stream complete in the order they were
 * taken, so the oldest is given back first. Used by one thread (the submission thread).
 */
final class StagingRing {

  /** Bytes {@code [start, start + bytes)} of the ring, read by the device until {@code use} is reached. */
  private record Part(long start, GpuEvent use) {
  }

  private final long size;
  private final ArrayDeque<Part> held = new ArrayDeque<>();
  /** Where the newest part ends: the next part goes here, or at 0 when the end has no room. */
  private long head;

  StagingRing(long size) {
    this.size = size;
  }

  /**
   * An offset for {@code bytes}, after the newest part still held, wrapping to the start when the end
   * has no room; -1 when the parts the device still reads leave no room. Parts whose event was
   * reached are given back first. The caller then {@link #hold}s what it took.
   */
  long reserve(long bytes) {
    while (!held.isEmpty() && held.peekFirst().use().isComplete()) {
      held.pollFirst().use().release();
    }
    if (held.isEmpty()) {
      head = 0;
      return bytes <= size ? 0 : -1;
    }
    long oldest = held.peekFirst().start();
    if (head > oldest) {
      // Held: [oldest, head). Free: [head, size) and [0, oldest).
      if (size - head >= bytes) {
        return head;
      }
      return oldest >= bytes ? 0 : -1;
    }
    // Wrapped: held [oldest, size) and [0, head). Free: [head, oldest).
    return oldest - head >= bytes ? head : -1;
  }

  /** The {@code bytes} at {@code start} (from {@link #reserve}) are read by the device until {@code use}; takes its reference. */
  void hold(long start, long bytes, GpuEvent use) {
    held.addLast(new Part(start, use));
    head = start + bytes;
  }

  /** Parts still held. */
  int held() {
    return held.size();
  }

  /** Releases every part's event (the engine is closing). */
  void clear() {
    for (Part part : held) {
      part.use().release();
    }
    held.clear();
    head = 0;
  }
}
