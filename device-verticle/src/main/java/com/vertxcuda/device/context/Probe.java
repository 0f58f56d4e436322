package com.vertxcuda.device.context;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Timestamps of a request's hops, for finding where time goes on a real GPU host. Off unless the
 * system property {@code vertxcuda.probe} is true; when off, {@link #mark} is one static read. Marks
 * are keyed by the request's sequence number (header {@value RequestSequencer#HEADER}); the
 * benchmarks print them.
 */
public final class Probe {

  /** The hops of one request, in order. */
  public enum Point {
    /** The device verticle forwards it to the context tier. */
    FORWARDED,
    /** Its context or library verticle starts serving it. */
    RECEIVED,
    /** Its work is queued on the stream. */
    QUEUED,
    /** The completion of its work is seen. */
    COMPLETED,
    /** The reply has left its context or library verticle. */
    REPLIED,
    /** The device verticle has the reply. */
    ANSWERED
  }

  /** One mark. */
  public record Mark(long seq, Point point, long nanos, String thread) {
  }

  public static final boolean ENABLED = Boolean.getBoolean("vertxcuda.probe");
  private static final ConcurrentLinkedQueue<Mark> MARKS = new ConcurrentLinkedQueue<>();

  private Probe() {
  }

  public static void mark(long seq, Point point) {
    if (ENABLED && seq > 0) {
      MARKS.add(new Mark(seq, point, System.nanoTime(), Thread.currentThread().getName()));
    }
  }

  /** Takes every mark so far. */
  public static List<Mark> drain() {
    List<Mark> out = new ArrayList<>();
    for (Mark m; (m = MARKS.poll()) != null; ) {
      out.add(m);
    }
    return out;
  }
}
