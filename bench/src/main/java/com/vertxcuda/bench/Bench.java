package com.vertxcuda.bench;

import com.vertxcuda.bench.result.BenchRecord;
import com.vertxcuda.bench.result.Series;
import io.vertx.core.json.JsonObject;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What a sweep measures into: the record, the sizes, the time budget, and the progress lines a
 * person watches while it runs.
 */
final class Bench {

  /**
   * How many times a headline point is measured in one run (the measurement block repeated, not the
   * JVM): its value is the median, each repeat's figure kept beside it, so noise shows as spread.
   */
  static final int REPEATS = 3;

  final BenchRecord record;
  final SweepSizes sizes;
  private final long start = System.nanoTime();
  private final long deadline;
  private final double budgetSeconds;
  private final Path file;

  Bench(BenchRecord record, SweepSizes sizes, double budgetSeconds, Path file) {
    this.record = record;
    this.sizes = sizes;
    this.budgetSeconds = budgetSeconds;
    this.deadline = start + (long) (budgetSeconds * 1e9);
    this.file = file;
  }

  /** Writes what the record holds so far. */
  void save() {
    try {
      record.write(file);
    } catch (IOException e) {
      progress("could not write %s: %s", file, e);
    }
  }

  void progress(String format, Object... args) {
    System.out.printf(Locale.ROOT, "[bench %6.1f s] %s%n", (System.nanoTime() - start) / 1e9,
      String.format(Locale.ROOT, format, args));
  }

  /**
   * Whether a new point may start; when the budget is spent, notes in the record that {@code path}
   * left {@code sweep} from {@code what} on unmeasured, and says no.
   */
  boolean inBudget(String sweep, String path, String what) {
    if (System.nanoTime() < deadline) {
      return true;
    }
    record.skip(sweep, path, String.format(Locale.ROOT, "time budget (%.0f s) spent before %s", budgetSeconds, what));
    progress("%s %s: budget spent, %s and after skipped", sweep, path, what);
    return false;
  }

  /** The plan for a point whose one run takes about {@code nanosPerRun}: its share of time, within the limits. */
  Plan plan(double nanosPerRun) {
    double wanted = sizes.secondsPerPoint() * 1e9 / Math.max(1, nanosPerRun);
    int runs = (int) Math.max(sizes.minRuns(), Math.min(sizes.maxRuns(), wanted));
    return new Plan(Math.max(3, runs / 10), runs);
  }

  /**
   * The plan for a point of a sweep with many variants ({@code copy.h2d} / {@code copy.d2h} by host
   * type), whose one run takes about {@code nanosPerRun}: {@link #SHORT_POINT_SECONDS} at most (the
   * size's own share where that is less), no fewer than 3 timed runs (a few at the largest sizes,
   * hundreds at the smallest), one untimed run in ten.
   */
  Plan shortPlan(double nanosPerRun) {
    double seconds = Math.min(SHORT_POINT_SECONDS, sizes.secondsPerPoint());
    int runs = (int) Math.max(3, Math.min(sizes.maxRuns(), seconds * 1e9 / Math.max(1, nanosPerRun)));
    return new Plan(Math.max(1, runs / 10), runs);
  }

  /** The time a {@link #shortPlan} point aims at. */
  static final double SHORT_POINT_SECONDS = 0.05;

  /** One measurement of a point: its timed runs. */
  interface Measurement {
    Histogram run() throws Exception;
  }

  /** Measures a point {@link #REPEATS} times if it is a {@code headline} one, else once. */
  static List<Histogram> measure(boolean headline, Measurement m) throws Exception {
    List<Histogram> all = new ArrayList<>();
    for (int i = 0; i < (headline ? REPEATS : 1); i++) {
      all.add(m.run());
    }
    return all;
  }

  /**
   * A latency point measured one or more times: the median of the repeats' medians (us) as its
   * value, each in {@code repeats}, the distribution of all their runs beside it.
   */
  JsonObject latency(Series series, double x, String what, Plan plan, List<Histogram> repeats, boolean cdf) {
    if (repeats.size() == 1) {
      return latency(series, x, what, plan, repeats.get(0), cdf);
    }
    Histogram all = merged(repeats);
    double[] p50s = repeats.stream().mapToDouble(h -> Histograms.p50(h) / 1e3).toArray();
    JsonObject p = series.add(x, all.getTotalCount(), (long) plan.warmup() * repeats.size(), p50s);
    p.put("latency", Histograms.latency(all, "us", cdf));
    progress("%-22s %-18s %-10s %12s: p50 %9.1f us  (repeats %s)  p99 %9.1f us  (%d runs)", series.sweep(),
      series.path(), series.variant(), what, Series.median(p50s), spread(p50s, "%.1f"),
      all.getValueAtPercentile(99) / 1e3, all.getTotalCount());
    return p;
  }

  /** A bandwidth point measured one or more times: the median of the repeats' GB/s (each over its median time). */
  JsonObject bandwidth(Series series, long bytes, Plan plan, List<Histogram> repeats) {
    if (repeats.size() == 1) {
      return bandwidth(series, bytes, plan, repeats.get(0));
    }
    return bandwidth(series, bytes, (long) plan.warmup() * repeats.size(), repeats);
  }

  /** A bandwidth point measured more than once, after {@code warmup} untimed runs in all. */
  JsonObject bandwidth(Series series, long bytes, long warmup, List<Histogram> repeats) {
    Histogram all = merged(repeats);
    double[] rates = repeats.stream().mapToDouble(h -> bytes / Histograms.p50(h)).toArray();
    JsonObject p = series.add(bytes, all.getTotalCount(), warmup, rates);
    p.put("latency", Histograms.latency(all, "us", false))
      .put("extra", new JsonObject().put("bestGBps", Series.round(bytes / (double) all.getMinValue())));
    progress("%-22s %-18s %-10s %12s: %8.2f GB/s median (repeats %s)  (%d runs)", series.sweep(), series.path(),
      series.variant(), bytes(bytes), Series.median(rates), spread(rates, "%.2f"), all.getTotalCount());
    return p;
  }

  /**
   * A rate point from one-at-a-time runs that each do {@code perRun} things: per second over each
   * repeat's median run, the median of the repeats as its value, the runs' distribution beside it.
   */
  JsonObject perRun(Series series, double x, String what, long perRun, Plan plan, List<Histogram> repeats) {
    Histogram all = merged(repeats);
    double[] rates = repeats.stream().mapToDouble(h -> perRun * 1e9 / Histograms.p50(h)).toArray();
    JsonObject p = repeats.size() == 1 ? series.add(x, all.getTotalCount(), plan.warmup(), rates[0])
      : series.add(x, all.getTotalCount(), (long) plan.warmup() * repeats.size(), rates);
    p.put("latency", Histograms.latency(all, "us", false));
    progress("%-22s %-18s %-10s %12s: %,12.0f /s median (repeats %s), p50 %9.1f us a run  (%d runs)", series.sweep(),
      series.path(), series.variant(), what, Series.median(rates), spread(rates, "%.0f"),
      all.getValueAtPercentile(50) / 1e3, all.getTotalCount());
    return p;
  }

  /** A rate point measured {@code nanos.length} times: {@code count} things done in each, per second. */
  JsonObject rate(Series series, double x, String what, long count, long warmup, long[] nanos) {
    if (nanos.length == 1) {
      return rate(series, x, what, count, warmup, nanos[0]);
    }
    double[] rates = Arrays.stream(nanos).mapToDouble(n -> count / (n / 1e9)).toArray();
    JsonObject p = series.add(x, count * nanos.length, warmup * nanos.length, rates);
    progress("%-22s %-18s %-10s %12s: %,12.0f /s median (repeats %s)  (%d runs)", series.sweep(), series.path(),
      series.variant(), what, Series.median(rates), spread(rates, "%.0f"), count * nanos.length);
    return p;
  }

  private static Histogram merged(List<Histogram> repeats) {
    Histogram all = Histograms.create();
    repeats.forEach(all::add);
    return all;
  }

  private static String spread(double[] values, String format) {
    StringBuilder b = new StringBuilder();
    for (double v : values) {
      b.append(b.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, format, v));
    }
    return b.toString();
  }

  /** A latency point: the median (us) as its value, the distribution beside it. */
  JsonObject latency(Series series, double x, String what, Plan plan, Histogram h, boolean cdf) {
    JsonObject p = series.add(x, h.getTotalCount(), plan.warmup(), Histograms.p50(h) / 1e3);
    p.put("latency", Histograms.latency(h, "us", cdf));
    progress("%-22s %-18s %-10s %12s: p50 %9.1f us  p99 %9.1f us  p99.9 %9.1f us  (%d runs)", series.sweep(),
      series.path(), series.variant(), what, h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(99) / 1e3,
      h.getValueAtPercentile(99.9) / 1e3, h.getTotalCount());
    return p;
  }

  /** A bandwidth point: {@code bytes} over the median time, in GB/s; the best run's beside it. */
  JsonObject bandwidth(Series series, long bytes, Plan plan, Histogram h) {
    JsonObject p = series.add(bytes, h.getTotalCount(), plan.warmup(), bytes / Histograms.p50(h));
    p.put("latency", Histograms.latency(h, "us", false))
      .put("extra", new JsonObject().put("bestGBps", Series.round(bytes / (double) h.getMinValue())));
    progress("%-22s %-18s %-10s %12s: %8.2f GB/s median, %8.2f best  (%d runs)", series.sweep(), series.path(),
      series.variant(), bytes(bytes), bytes / Histograms.p50(h), bytes / (double) h.getMinValue(), h.getTotalCount());
    return p;
  }

  /** A rate point: {@code count} things done in {@code nanos}, per second. */
  JsonObject rate(Series series, double x, String what, long count, long warmup, long nanos) {
    JsonObject p = series.add(x, count, warmup, count / (nanos / 1e9));
    progress("%-22s %-18s %-10s %12s: %,12.0f /s  (%d runs)", series.sweep(), series.path(), series.variant(),
      what, count / (nanos / 1e9), count);
    return p;
  }

  /** A time point from a burst: {@code nanos} for {@code count} requests in flight together, per request (us). */
  JsonObject perRequest(Series series, double x, String what, long count, long warmup, long nanos) {
    JsonObject p = series.add(x, count, warmup, nanos / 1e3 / count);
    progress("%-22s %-18s %-10s %12s: %9.1f us each  (%d in flight)", series.sweep(), series.path(),
      series.variant(), what, nanos / 1e3 / count, count);
    return p;
  }

  static String bytes(long n) {
    if (n >= 1 << 30 && n % (1 << 30) == 0) {
      return (n >> 30) + " GiB";
    }
    if (n >= 1 << 20 && n % (1 << 20) == 0) {
      return (n >> 20) + " MiB";
    }
    if (n >= 1 << 10 && n % (1 << 10) == 0) {
      return (n >> 10) + " KiB";
    }
    return n + " B";
  }
}
