package com.vertxcuda.bench.report;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * The figures the report's tables lead with: one measurement per path at one size for each headline
 * (raw JCuda, the toolkit in both modes, PyTorch) with the toolkit's cost relative to the others,
 * and for each GEMM precision the size from which the toolkit costs under 5 % more.
 */
final class Figures {

  /** Where the toolkit's overhead counts as small. */
  static final double CROSSOVER_RATIO = 1.05;
  static final String[] TOOLKIT = {"vertx.in_process", "vertx.process"};
  static final String[] REFERENCES = {"raw-jcuda", "pytorch"};

  /** Which size of a sweep a headline takes. */
  enum Pick { SMALLEST, LARGEST, FIXED }

  /**
   * A headline: {@code sweep} through raw JCuda ({@code rawVariant}), the toolkit ({@code toolkitVariant})
   * and PyTorch ({@code pytorchVariant}) at one size; {@code label} may name the size with {x}.
   * {@code toolkitAlternatives}, where not empty, are the toolkit's variants the row takes the best of
   * (the first is {@code toolkitVariant}), saying which; {@code goal}, where not null, what the toolkit
   * should reach.
   */
  record Headline(String label, String sweep, String toolkitVariant, String rawVariant, String pytorchVariant,
                  Pick pick, double x, boolean higherIsBetter, List<String> toolkitAlternatives, Goal goal) {

    Headline(String label, String sweep, String toolkitVariant, String rawVariant, String pytorchVariant, Pick pick,
             double x, boolean higherIsBetter) {
      this(label, sweep, toolkitVariant, rawVariant, pytorchVariant, pick, x, higherIsBetter, List.of(), null);
    }

    Headline withGoal(Goal g) {
      return new Headline(label, sweep, toolkitVariant, rawVariant, pytorchVariant, pick, x, higherIsBetter,
        toolkitAlternatives, g);
    }

    /** The best of {@code variants} (the first is the toolkit's variant), the row saying which it took. */
    Headline bestOf(String... variants) {
      return new Headline(label, sweep, variants[0], rawVariant, pytorchVariant, pick, x, higherIsBetter,
        List.of(variants), goal);
    }

    List<String> toolkitVariants() {
      return toolkitAlternatives.isEmpty() ? List.of(toolkitVariant) : toolkitAlternatives;
    }
  }

  /**
   * What a headline's toolkit figure should reach: at least {@code fraction} of raw JCuda's
   * ({@code fraction} > 0), or at least (for times: at most) {@code absolute} in the row's unit.
   */
  record Goal(double fraction, double absolute) {

    static Goal ofRaw(double fraction) {
      return new Goal(fraction, 0);
    }

    static Goal atLeast(double absolute) {
      return new Goal(0, absolute);
    }

    String text(Row row) {
      if (fraction > 0) {
        return String.format(Locale.ROOT, "\u2265 %s\u00d7 raw JCuda", Axis.number(fraction));
      }
      return (row.higherIsBetter() ? "\u2265 " : "\u2264 ") + Tables.value(absolute, row.unit());
    }

    /**
     * Whether {@code path} meets it, given the repeats' spread: {@code yes} when all of the spread
     * does, {@code no} when none of it does, else {@code within the spread}; empty where unmeasured
     * (or, for a goal against raw JCuda, where raw JCuda is).
     */
    String verdict(Row row, String path) {
      Double v = row.values().get(path);
      if (v == null) {
        return "";
      }
      double lo;
      double hi;
      double limit;
      if (fraction > 0) {
        // Against raw: the toolkit's cost over raw's, at most 1 / fraction.
        double[] cost = row.ratioRange(path, "raw-jcuda");
        if (cost == null) {
          return "";
        }
        lo = -cost[1];
        hi = -cost[0];
        limit = -1 / fraction;
      } else {
        double[] range = row.spreads().getOrDefault(path, new double[] {v, v});
        boolean up = row.higherIsBetter();
        lo = up ? range[0] : -range[1];
        hi = up ? range[1] : -range[0];
        limit = up ? absolute : -absolute;
      }
      return lo >= limit ? "yes" : hi < limit ? "no" : "within the spread";
    }
  }

  /**
   * A headline's values, by path, and the size they are at; {@code spreads}, by path, the lowest and
   * highest of a repeated point's repeats (absent where it was measured once); {@code via}, by path, the
   * variant a headline with alternatives took; {@code headline}, where it comes from.
   */
  record Row(String label, String unit, boolean higherIsBetter, Map<String, Double> values,
             Map<String, double[]> spreads, Map<String, String> via, Headline headline) {

    Row(String label, String unit, boolean higherIsBetter, Map<String, Double> values) {
      this(label, unit, higherIsBetter, values, Map.of(), Map.of(), null);
    }

    /** The goal, if the headline has one. */
    Goal goal() {
      return headline == null ? null : headline.goal();
    }

    /**
     * The range {@link #ratio} can take within the repeats' spread: [lowest, highest], each path's
     * extremes against the other's (a path measured once counts its one value); null where a value is missing.
     */
    double[] ratioRange(String path, String reference) {
      if (ratio(path, reference) == null) {
        return null;
      }
      double[] v = spreads.getOrDefault(path, new double[] {values.get(path), values.get(path)});
      double[] r = spreads.getOrDefault(reference, new double[] {values.get(reference), values.get(reference)});
      return higherIsBetter ? new double[] {r[0] / v[1], r[1] / v[0]} : new double[] {v[0] / r[1], v[1] / r[0]};
    }

    /** The toolkit path's cost relative to {@code reference}'s (1: the same; above 1: slower), or null. */
    Double ratio(String path, String reference) {
      Double v = values.get(path);
      Double r = values.get(reference);
      if (v == null || r == null || v == 0 || r == 0) {
        return null;
      }
      return higherIsBetter ? r / v : v / r;
    }
  }

  /** For one precision, toolkit path and reference: from which size on the toolkit stays within 5 %. */
  record Crossover(String precision, String path, String reference, Double from, double largest,
                   double ratioAtLargest) {
  }

  static final List<Headline> HEADLINES = List.of(
    new Headline("1 KiB fill round trip, p50", "roundtrip.fill", "fill", "memset + synchronize", "fill_ + synchronize",
      Pick.FIXED, 1024, false),
    new Headline("{x} round trip (there and back), p50", "roundtrip.payload", "transfer buffer",
      "pinned, one synchronize", "pinned, one synchronize", Pick.SMALLEST, 0, false),
    new Headline("{x} round trip (there and back), p50", "roundtrip.payload", "transfer buffer",
      "pinned, one synchronize", "pinned, one synchronize", Pick.LARGEST, 0, false),
    new Headline("GEMM {x} FP32, one at a time", "gemm.latency", "FP32", "FP32", "FP32", Pick.LARGEST, 0, false),
    new Headline("GEMM {x} TF32, one at a time", "gemm.latency", "TF32", "TF32", "TF32", Pick.LARGEST, 0, false),
    new Headline("GEMM {x} F16, one at a time", "gemm.latency", "F16", "F16", "F16", Pick.LARGEST, 0, false),
    new Headline("GEMM {x} FP32, all in flight", "gemm.pipelined", "FP32", "FP32", "FP32", Pick.LARGEST, 0, false),
    new Headline("GEMM {x} TF32, all in flight", "gemm.pipelined", "TF32", "TF32", "TF32", Pick.LARGEST, 0, false),
    new Headline("64x64 GEMMs, one per message", "smallgemm.batch", "1 event loop", "one thread", "one thread",
      Pick.FIXED, 1, true),
    new Headline("64x64 GEMMs, {x} per request (strided batched; PyTorch bmm)", "smallgemm.batch", "strided batched", "one thread",
      "one thread", Pick.LARGEST, 0, true),
    new Headline("H2D {x}: transfer buffer / pinned", "copy.h2d", "transfer buffer", "pinned", "pinned", Pick.LARGEST,
      0, true),
    new Headline("D2H {x}: lent buffer / pinned", "copy.d2h", "lent buffer", "pinned", "pinned", Pick.LARGEST, 0, true),
    new Headline("H2D {x}: heap / pageable", "copy.h2d", "heap", "pageable", "pageable", Pick.LARGEST, 0, true),
    new Headline("D2H {x}, default options: download (lent buffer) / pinned", "copy.large.d2h", "lent buffer", "pinned",
      "pinned", Pick.LARGEST, 0, true).withGoal(Goal.ofRaw(0.9)),
    new Headline("D2H {x}, the JVM's first download / pinned allocated for the copy (PyTorch: .cpu())", "copy.large.d2h",
      "lent buffer, the JVM's first", "pinned, allocated for each copy", "a new tensor each copy (.cpu())",
      Pick.LARGEST, 0, true),
    new Headline("H2D {x}, default options: best upload / pinned", "copy.large.h2d", "transfer buffer", "pinned",
      "pinned", Pick.LARGEST, 0, true).bestOf("transfer buffer", "direct Buffer", "heap").withGoal(Goal.ofRaw(0.9)),
    new Headline("H2D {x}, default options: heap Buffer upload / pageable", "copy.large.h2d", "heap", "pageable",
      "pageable", Pick.LARGEST, 0, true).withGoal(Goal.atLeast(20)),
    new Headline("D2H {x}, default options: downloadFloats / pageable", "copy.large.d2h", "float[]", "pageable",
      "pageable", Pick.LARGEST, 0, true).withGoal(Goal.atLeast(20)),
    new Headline("FFT C2C {x}", "fft.c2c", "C2C forward, in place", "C2C forward, in place", "C2C forward, in place",
      Pick.LARGEST, 0, false),
    new Headline("uniform RNG {x}", "rng.uniform", "Philox, F32", "Philox, F32", "Philox, F32", Pick.LARGEST, 0, false));

  private Figures() {
  }

  static List<Row> headlines(Results r) {
    List<Row> rows = new ArrayList<>();
    for (Headline h : HEADLINES) {
      // By path, its series of the headline (the toolkit's: each alternative it measured).
      Map<String, List<Results.Entry>> found = new LinkedHashMap<>();
      r.find(h.sweep(), "raw-jcuda", h.rawVariant()).ifPresent(e -> found.put("raw-jcuda", List.of(e)));
      for (String path : TOOLKIT) {
        List<Results.Entry> measured = h.toolkitVariants().stream().map(v -> r.find(h.sweep(), path, v))
          .flatMap(Optional::stream).toList();
        if (!measured.isEmpty()) {
          found.put(path, measured);
        }
      }
      r.find(h.sweep(), "pytorch", h.pytorchVariant()).ifPresent(e -> found.put("pytorch", List.of(e)));
      if (found.isEmpty()) {
        continue;
      }
      Optional<Double> x = pick(h, found.values().stream().flatMap(List::stream).toList());
      if (x.isEmpty()) {
        continue;
      }
      Map<String, Double> values = new LinkedHashMap<>();
      Map<String, double[]> spreads = new LinkedHashMap<>();
      Map<String, String> via = new LinkedHashMap<>();
      String unit = "";
      for (Map.Entry<String, List<Results.Entry>> e : found.entrySet()) {
        Results.Entry best = null;
        JsonObject point = null;
        for (Results.Entry candidate : e.getValue()) {
          Optional<JsonObject> p = candidate.at(x.get());
          if (p.isPresent() && (point == null || better(h, p.get().getDouble("value"), point.getDouble("value")))) {
            best = candidate;
            point = p.get();
          }
        }
        if (point != null) {
          values.put(e.getKey(), point.getDouble("value"));
          spread(point).ifPresent(range -> spreads.put(e.getKey(), range));
          if (h.toolkitAlternatives().size() > 1 && !e.getKey().equals("raw-jcuda") && !e.getKey().equals("pytorch")) {
            via.put(e.getKey(), best.variant());
          }
          unit = best.json().getString("unit");
        }
      }
      String size = h.sweep().startsWith("copy") || h.sweep().startsWith("roundtrip") ? Axis.bytes(x.get())
        : h.sweep().startsWith("gemm") ? String.valueOf(Math.round(x.get())) : size(x.get());
      rows.add(new Row(h.label().replace("{x}", size), unit, h.higherIsBetter(), values, spreads, via, h));
    }
    return rows;
  }

  /**
   * The rows of {@code gemm.batched}: per variant (precision and shape) and GEMMs per call, each
   * path's rate with its repeats' spread.
   */
  static List<Row> batchedGemms(Results r) {
    String sweep = "gemm.batched";
    List<Row> rows = new ArrayList<>();
    for (String variant : r.sweep(sweep).stream().map(Results.Entry::variant).distinct().toList()) {
      TreeSet<Double> xs = new TreeSet<>();
      r.sweep(sweep).stream().filter(e -> e.variant().equals(variant)).forEach(e -> e.points()
        .forEach(p -> xs.add(p.getDouble("x"))));
      for (double x : xs) {
        Map<String, Double> values = new LinkedHashMap<>();
        Map<String, double[]> spreads = new LinkedHashMap<>();
        for (String path : List.of("raw-jcuda", TOOLKIT[0], TOOLKIT[1], "pytorch")) {
          r.find(sweep, path, variant).flatMap(e -> e.at(x)).ifPresent(p -> {
            values.put(path, p.getDouble("value"));
            spread(p).ifPresent(range -> spreads.put(path, range));
          });
        }
        rows.add(new Row(variant + ", " + Math.round(x) + " per call", "1/s", true, values, spreads, Map.of(), null));
      }
    }
    return rows;
  }

  private static boolean better(Headline h, double value, double than) {
    return h.higherIsBetter() ? value > than : value < than;
  }

  /** A repeated point's [lowest, highest] repeat; empty where it was measured once. */
  static Optional<double[]> spread(JsonObject point) {
    JsonArray repeats = point.getJsonArray("repeats");
    if (repeats == null || repeats.isEmpty()) {
      return Optional.empty();
    }
    double lo = Double.MAX_VALUE;
    double hi = -Double.MAX_VALUE;
    for (Object o : repeats) {
      double v = ((Number) o).doubleValue();
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
    return Optional.of(new double[] {lo, hi});
  }

  /** The size a headline takes: fixed, or the smallest or largest that every path measured (else the toolkit's). */
  private static Optional<Double> pick(Headline h, Collection<Results.Entry> series) {
    if (h.pick() == Pick.FIXED) {
      return Optional.of(h.x());
    }
    TreeSet<Double> common = null;
    TreeSet<Double> any = new TreeSet<>();
    for (Results.Entry e : series) {
      TreeSet<Double> xs = new TreeSet<>();
      e.points().forEach(p -> xs.add(p.getDouble("x")));
      any.addAll(xs);
      if (common == null) {
        common = xs;
      } else {
        common.retainAll(xs);
      }
    }
    TreeSet<Double> from = common != null && !common.isEmpty() ? common : any;
    return from.isEmpty() ? Optional.empty() : Optional.of(h.pick() == Pick.SMALLEST ? from.first() : from.last());
  }

  static List<Crossover> crossovers(Results r) {
    List<Crossover> all = new ArrayList<>();
    for (String precision : new String[] {"FP32", "TF32", "F16"}) {
      for (String path : TOOLKIT) {
        for (String reference : REFERENCES) {
          Optional<Results.Entry> t = r.find("gemm.latency", path, precision);
          Optional<Results.Entry> ref = r.find("gemm.latency", reference, precision);
          if (t.isEmpty() || ref.isEmpty()) {
            continue;
          }
          List<double[]> ratios = ratios(t.get(), ref.get(), false);
          if (ratios.isEmpty()) {
            continue;
          }
          Double from = null;
          for (int i = ratios.size() - 1; i >= 0 && ratios.get(i)[1] <= CROSSOVER_RATIO; i--) {
            from = ratios.get(i)[0];
          }
          double[] last = ratios.get(ratios.size() - 1);
          all.add(new Crossover(precision, path, reference, from, last[0], last[1]));
        }
      }
    }
    return all;
  }

  /** [x, cost of {@code t} relative to {@code ref}] at every size both measured, smallest first. */
  static List<double[]> ratios(Results.Entry t, Results.Entry ref, boolean higherIsBetter) {
    List<double[]> out = new ArrayList<>();
    for (JsonObject p : t.points()) {
      double x = p.getDouble("x");
      ref.at(x).ifPresent(q -> {
        double v = p.getDouble("value");
        double w = q.getDouble("value");
        if (v > 0 && w > 0) {
          out.add(new double[] {x, higherIsBetter ? w / v : v / w});
        }
      });
    }
    return out;
  }

  /** A count as people say it: 2^k for large powers of two. */
  static String size(double x) {
    long v = Math.round(x);
    if (v >= 1 << 14 && Long.bitCount(v) == 1) {
      return "2^" + Long.numberOfTrailingZeros(v);
    }
    return String.valueOf(v);
  }
}
