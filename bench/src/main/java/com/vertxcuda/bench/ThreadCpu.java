package com.vertxcuda.bench;

import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * CPU time by thread, this JVM's and its child processes' (a device host's, read from Linux's
 * {@code /proc}; absent elsewhere), named with their numbers folded ({@code vert.x-eventloop-thread-#}).
 * The small-GEMM sweep divides it by the GEMMs run: which single thread a rate is bound by.
 */
final class ThreadCpu {

  private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
  /** A Linux clock tick, the unit of {@code /proc/.../stat}'s times, in ns (USER_HZ is 100 on Linux). */
  private static final long TICK_NANOS = 10_000_000L;

  private ThreadCpu() {
  }

  /** Nanoseconds of CPU so far, by folded thread name; a child's threads prefixed {@code child:}. */
  static Map<String, Long> snapshot() {
    Map<String, Long> by = new TreeMap<>();
    long[] ids = MX.getAllThreadIds();
    ThreadInfo[] infos = MX.getThreadInfo(ids);
    long self = Thread.currentThread().getId();
    for (int i = 0; i < ids.length; i++) {
      if (ids[i] == self) {
        continue; // the bench's own thread waits; what it spends here is this reading
      }
      long nanos = MX.getThreadCpuTime(ids[i]);
      if (infos[i] != null && nanos > 0) {
        by.merge(fold(infos[i].getThreadName()), nanos, Long::sum);
      }
    }
    ProcessHandle.current().children().forEach(c -> children(c.pid(), by));
    return by;
  }

  /** µs of CPU per unit between two snapshots, for the threads that used at least 1 % of {@code wallNanos}. */
  static JsonObject perUnit(Map<String, Long> before, Map<String, Long> after, long units, long wallNanos) {
    JsonObject per = new JsonObject();
    after.forEach((name, nanos) -> {
      long used = nanos - before.getOrDefault(name, 0L);
      if (used * 100 >= wallNanos && units > 0) {
        per.put(name, Math.round(used / 1e3 / units * 1000) / 1000.0);
      }
    });
    return per;
  }

  private static void children(long pid, Map<String, Long> by) {
    Path tasks = Path.of("/proc", Long.toString(pid), "task");
    if (!Files.isDirectory(tasks)) {
      return;
    }
    try (Stream<Path> all = Files.list(tasks)) {
      all.forEach(task -> {
        try {
          String comm = Files.readString(task.resolve("comm")).trim();
          String stat = Files.readString(task.resolve("stat"));
          // Fields after the parenthesised name: state is the first, utime the 12th, stime the 13th.
          String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
          long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
          by.merge("child:" + fold(comm), ticks * TICK_NANOS, Long::sum);
        } catch (IOException | RuntimeException e) {
          // a thread that ended while read: left out
        }
      });
    } catch (IOException e) {
      // the process ended
    }
  }

  private static String fold(String name) {
    return name.replaceAll("[0-9]+", "#");
  }
}
