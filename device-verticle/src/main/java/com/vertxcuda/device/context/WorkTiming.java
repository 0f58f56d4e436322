package com.vertxcuda.device.context;

import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.GpuEvent;

/**
 * When one run of work on a stream ({@link StreamOrdering#run}, while phases are measured) was
 * queued, began and ended: its stream wait and its execution time, read once it is done. The
 * completion thread that answers the requests the work served holds it while it answers them
 * ({@link #answering}), so every request answered from that completion — one, or a batched group's —
 * reads the same run's times ({@link #current}), wherever in the libraries the answer is given.
 */
public final class WorkTiming {

  private static final ThreadLocal<WorkTiming> ANSWERING = new ThreadLocal<>();

  private final long enqueued;
  private final GpuEvent start;
  private final GpuEvent done;
  private long streamWait = -1;
  private long execution = -1;

  WorkTiming(long enqueued, GpuEvent start, GpuEvent done) {
    this.enqueued = enqueued;
    this.start = start;
    this.done = done;
  }

  /** The event after the work: the one its completion is awaited on. */
  GpuEvent done() {
    return done;
  }

  /**
   * Reads the times once the work is done, before its events go back to the backend. The stream
   * wait is from queueing to the start marker on the host's clock where the backend tells when a
   * marker was reached (the host backend); on a GPU, whose clock is not the host's, it is what is
   * left of the time from queueing to seeing the work done once its execution is taken off (the
   * completion's own latency included).
   */
  void finish(DeviceContext device, long seen) {
    execution = device.elapsedNanos(start, done);
    long began = device.reachedNanos(start);
    if (began >= 0) {
      streamWait = Math.max(0, began - enqueued);
    } else if (execution >= 0) {
      streamWait = Math.max(0, seen - enqueued - execution);
    }
    start.release();
  }

  /** The start marker goes back unread (the work could not be awaited). */
  void abandon() {
    start.release();
  }

  /** From queueing to the stream beginning the work, in ns; -1 when unknown. */
  public long streamWaitNanos() {
    return streamWait;
  }

  /** The work's execution on the device, in ns; -1 when unknown. */
  public long executionNanos() {
    return execution;
  }

  /** Runs {@code answer} with this run's times as {@link #current} on this thread. */
  void answering(Runnable answer) {
    ANSWERING.set(this);
    try {
      answer.run();
    } finally {
      ANSWERING.remove();
    }
  }

  /** The run whose completion this thread is answering now; null when none (or phases are not measured). */
  public static WorkTiming current() {
    return ANSWERING.get();
  }
}
