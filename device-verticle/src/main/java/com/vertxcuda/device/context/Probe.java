package com.vertxcuda.device.context;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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

  /**
   * Where a device host appends its marks (system property {@code vertxcuda.probe.file}), or null.
   * Both processes read the same monotonic clock, so the parent can merge them with its own.
   */
  public static final String FILE = System.getProperty("vertxcuda.probe.file");

  /** Appends every mark so far to {@code file}, one per line. */
  public static void appendTo(Path file) throws IOException {
    StringBuilder out = new StringBuilder();
    for (Mark m : drain()) {
      out.append(m.seq()).append(' ').append(m.point()).append(' ').append(m.nanos()).append(' ').append(m.thread())
        .append('\n');
    }
    if (out.length() > 0) {
      Files.writeString(file, out, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }
  }

  /** Reads and removes the marks a device host appended to {@code file}. */
  public static List<Mark> takeFrom(Path file) throws IOException {
    List<Mark> marks = new ArrayList<>();
    if (!Files.exists(file)) {
      return marks;
    }
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      String[] f = line.split(" ", 4);
      marks.add(new Mark(Long.parseLong(f[0]), Point.valueOf(f[1]), Long.parseLong(f[2]), f[3]));
    }
    Files.delete(file);
    return marks;
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
