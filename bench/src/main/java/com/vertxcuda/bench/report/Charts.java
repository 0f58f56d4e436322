package com.vertxcuda.bench.report;

import com.vertxcuda.bench.report.Axis.Format;
import com.vertxcuda.bench.report.Axis.Scale;
import com.vertxcuda.bench.report.Chart.Group;
import com.vertxcuda.bench.report.Chart.Line;
import com.vertxcuda.bench.report.Chart.Rule;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.ToDoubleFunction;

/** The report's charts, made from the results: which sweep goes on which axes, each path in its colour. */
final class Charts {

  private static final double[] DASHED = {7, 4};
  private static final double[] DOTTED = {2, 3};
  private static final int JMH = 0x9467BD;

  private Charts() {
  }

  /** Each path's colour, the same in every chart. */
  static int color(String path) {
    switch (path) {
      case "raw-jcuda":
        return 0x222222;
      case "vertx.in_process":
        return 0x1F77B4;
      case "vertx.process":
        return 0xFF7F0E;
      case "pytorch":
        return 0xD62728;
      case "vertx.tier":
        return 0x2CA02C;
      case "context":
        return 0x17BECF;
      default:
        return 0x7F7F7F;
    }
  }

  static List<Chart> all(Results r) {
    List<Chart> charts = new ArrayList<>();
    charts.add(cdf(r));
    charts.add(hops(r));
    charts.add(percentiles(r, "roundtrip.payload", "payload-latency", "Round trip against payload (upload, then download "
      + "back)", "solid: p50, dashed: p99", new Axis("payload", Scale.LOG, Format.BYTES)));
    charts.add(percentiles(r, "concurrency.inflight", "concurrency-latency", "1 KiB fill latency against requests in "
      + "flight (one event loop)", "solid: p50, dashed: p99", new Axis("requests in flight", Scale.LOG,
      Format.POWER_OF_TWO)));
    charts.add(values(r, "concurrency.inflight", "concurrency-rate", "Requests per second against requests in flight",
      "1 KiB fills, one event loop", new Axis("requests in flight", Scale.LOG, Format.POWER_OF_TWO),
      new Axis("requests/s", Scale.LOG, Format.RATE), p -> extra(p, "rate")));
    charts.add(values(r, "concurrency.eventloops", "concurrency-eventloops", "Requests per second against event loops",
      "1 KiB fills, the same number in flight on each event loop", new Axis("event loops", Scale.LOG,
      Format.POWER_OF_TWO), new Axis("requests/s", Scale.LOG, Format.RATE), p -> extra(p, "rate")));
    for (String precision : new String[] {"FP32", "TF32", "F16"}) {
      charts.add(gemm(r, precision));
    }
    charts.add(overhead(r));
    charts.add(values(r, "smallgemm.batch", "smallgemm", "64x64 SGEMMs per second against GEMMs per message",
      "toolkit: coalescing client (1: plain); raw JCuda: strided-batched cuBLAS of that many; PyTorch: bmm",
      new Axis("GEMMs per message / batch", Scale.LOG, Format.POWER_OF_TWO),
      new Axis("GEMMs/s", Scale.LOG, Format.RATE), p -> p.getDouble("value")));
    charts.add(values(r, "copy.h2d", "copy-h2d", "Host to device copy bandwidth, one copy at a time", null,
      new Axis("copy size", Scale.LOG, Format.BYTES), new Axis("GB/s", Scale.LOG, Format.NUMBER),
      p -> p.getDouble("value")));
    charts.add(values(r, "copy.d2h", "copy-d2h", "Device to host copy bandwidth, one copy at a time", null,
      new Axis("copy size", Scale.LOG, Format.BYTES), new Axis("GB/s", Scale.LOG, Format.NUMBER),
      p -> p.getDouble("value")));
    charts.add(values(r, "fft.c2c", "fft", "FFT C2C forward against size, one at a time (p50)", null,
      new Axis("complex elements", Scale.LOG, Format.POWER_OF_TWO), new Axis("time", Scale.LOG, Format.MICROSECONDS),
      p -> p.getDouble("value")));
    charts.add(values(r, "rng.uniform", "rng", "Uniform random numbers against count, one request at a time (p50)", null,
      new Axis("F32 numbers", Scale.LOG, Format.POWER_OF_TWO), new Axis("time", Scale.LOG, Format.MICROSECONDS),
      p -> p.getDouble("value")));
    charts.add(graph(r));
    charts.add(recovery(r));
    charts.add(ratios(r));
    charts.add(jmh(r));
    return charts.stream().filter(c -> !c.isEmpty()).toList();
  }

  private static Chart cdf(Results r) {
    List<Line> lines = new ArrayList<>();
    for (Results.Entry e : r.sweep("roundtrip.fill")) {
      for (JsonObject p : e.points()) {
        JsonArray cdf = p.getJsonObject("latency", new JsonObject()).getJsonArray("cdf");
        if (cdf == null) {
          continue;
        }
        double[] xs = new double[cdf.size()];
        double[] ys = new double[cdf.size()];
        for (int i = 0; i < cdf.size(); i++) {
          xs[i] = cdf.getJsonArray(i).getDouble(0);
          ys[i] = cdf.getJsonArray(i).getDouble(1);
        }
        lines.add(new Line(e.label() + ", " + e.variant(), color(e.path()), dash(e, r.sweep("roundtrip.fill")), 2, xs,
          ys));
      }
    }
    return Chart.lines("latency-cdf", "1 KiB fill round trip: latency distribution by path",
      "fraction of round trips at or below each latency, spaced by nines; each path adds hops to the one above it",
      new Axis("round trip", Scale.LOG, Format.MICROSECONDS), new Axis("fraction at or below", Scale.NINES,
      Format.FRACTION), lines, List.of());
  }

  private static Chart hops(Results r) {
    List<String> categories = new ArrayList<>();
    String[] names = {"p50", "p99", "p99.9"};
    String[] keys = {"p50", "p99", "p999"};
    List<double[]> values = new ArrayList<>();
    for (Results.Entry e : r.sweep("roundtrip.fill")) {
      for (JsonObject p : e.points()) {
        JsonObject l = p.getJsonObject("latency");
        categories.add(e.label() + ", " + e.variant());
        double[] v = new double[keys.length];
        for (int k = 0; k < keys.length; k++) {
          v[k] = l == null ? Double.NaN : l.getDouble(keys[k]);
        }
        values.add(v);
      }
    }
    List<Group> groups = new ArrayList<>();
    int[] shades = {0x1F77B4, 0x9ECAE1, 0xC6DBEF};
    for (int k = 0; k < names.length; k++) {
      int kk = k;
      groups.add(new Group(names[k], shades[k], values.stream().mapToDouble(v -> v[kk]).toArray()));
    }
    return Chart.bars("hops", "1 KiB fill round trip, hop by hop", "each row adds hops to the one above it",
      new Axis("round trip", Scale.LOG, Format.MICROSECONDS), categories, groups, List.of());
  }

  /** The 10-step pipelines, per path and buffer size: 10 requests against one replay, p50 and p99 bars. */
  private static Chart graph(Results r) {
    List<String> categories = new ArrayList<>();
    List<double[]> values = new ArrayList<>();
    for (String sweep : List.of("graph.pipeline", "graph.spectral")) {
      String pipeline = sweep.equals("graph.pipeline") ? "small ops" : "FFT and RNG";
      for (Results.Entry e : r.sweep(sweep)) {
        for (JsonObject p : e.points()) {
          JsonObject l = p.getJsonObject("latency");
          categories.add(pipeline + ", " + e.label() + ", " + e.variant() + ", " + Axis.number(p.getDouble("x")) + " B");
          values.add(new double[] {l == null ? Double.NaN : l.getDouble("p50"), l == null ? Double.NaN : l.getDouble("p99")});
        }
      }
    }
    List<Group> groups = List.of(new Group("p50", 0x1F77B4, values.stream().mapToDouble(v -> v[0]).toArray()),
      new Group("p99", 0x9ECAE1, values.stream().mapToDouble(v -> v[1]).toArray()));
    return Chart.bars("graph", "10-step pipelines: 10 requests against one replay",
      "time per pipeline, one at a time; replay: one CUDA graph launch on cuda, step by step on the host backend",
      new Axis("time per pipeline", Scale.LOG, Format.MICROSECONDS), categories, groups, List.of());
  }

  /** p50 solid and p99 dashed for every series of a latency sweep. */
  private static Chart percentiles(Results r, String sweep, String name, String title, String note, Axis x) {
    List<Line> lines = new ArrayList<>();
    List<Results.Entry> entries = r.sweep(sweep);
    for (Results.Entry e : entries) {
      String label = e.label() + (variants(entries, e.path()) > 1 ? ", " + e.variant() : "");
      lines.add(line(label + " p50", e, null, p -> latency(p, "p50")));
      lines.add(line(label + " p99", e, DASHED, p -> latency(p, "p99")));
    }
    return Chart.lines(name, title, note, x, new Axis("latency", Scale.LOG, Format.MICROSECONDS), lines, List.of());
  }

  /** One line per series of a sweep, {@code value} of each point; variants of a path told apart by dashes. */
  private static Chart values(Results r, String sweep, String name, String title, String note, Axis x, Axis y,
                              ToDoubleFunction<JsonObject> value) {
    List<Line> lines = new ArrayList<>();
    List<Results.Entry> entries = r.sweep(sweep);
    for (Results.Entry e : entries) {
      String label = e.label() + (variants(entries, e.path()) > 1 ? ", " + e.variant() : "");
      lines.add(line(label, e, dash(e, entries), value));
    }
    return Chart.lines(name, title, note, x, y, lines, List.of());
  }

  private static Chart gemm(Results r, String precision) {
    List<Line> lines = new ArrayList<>();
    for (Results.Entry e : r.sweep("gemm.latency")) {
      if (e.variant().equals(precision)) {
        lines.add(line(e.label() + ", one at a time", e, null, p -> p.getDouble("value")));
      }
    }
    for (Results.Entry e : r.sweep("gemm.pipelined")) {
      if (e.variant().equals(precision)) {
        lines.add(line(e.label() + ", all in flight", e, DASHED, p -> p.getDouble("value")));
      }
    }
    String what = precision.equals("F16") ? "F16 inputs, F32 output (GEMM_EX)" : precision.equals("TF32")
      ? "F32 with TF32 tensor cores" : "F32";
    return Chart.lines("gemm-" + precision.toLowerCase(), "GEMM time against size, " + precision,
      what + "; solid: each answered before the next (p50), dashed: time per GEMM with all in flight",
      new Axis("m = n = k", Scale.LOG, Format.POWER_OF_TWO), new Axis("time per GEMM", Scale.LOG, Format.MICROSECONDS),
      lines, List.of());
  }

  /** The toolkit's GEMM time over raw JCuda's, per size, with the 5 % line the crossover is read from. */
  private static Chart overhead(Results r) {
    List<Line> lines = new ArrayList<>();
    int shade = 0;
    for (Results.Entry e : r.sweep("gemm.latency")) {
      if (!e.path().startsWith("vertx.")) {
        continue;
      }
      Optional<Results.Entry> raw = r.find("gemm.latency", "raw-jcuda", e.variant());
      if (raw.isEmpty()) {
        continue;
      }
      List<double[]> ratios = Figures.ratios(e, raw.get(), false);
      double[] dash = e.variant().equals("FP32") ? null : e.variant().equals("TF32") ? DASHED : DOTTED;
      lines.add(new Line(e.label() + ", " + e.variant(), color(e.path()), dash, 2,
        ratios.stream().mapToDouble(v -> v[0]).toArray(), ratios.stream().mapToDouble(v -> v[1]).toArray()));
      shade++;
    }
    return Chart.lines("gemm-overhead", "The toolkit's GEMM time over raw JCuda's, one at a time",
      "p50 against p50; below the line the toolkit costs under 5 % more", new Axis("m = n = k", Scale.LOG,
      Format.POWER_OF_TWO), new Axis("toolkit / raw", Scale.LOG, Format.RATIO), shade == 0 ? List.of() : lines,
      List.of(new Rule(Figures.CROSSOVER_RATIO, "5 % over raw JCuda")));
  }

  private static Chart recovery(Results r) {
    List<String> categories = new ArrayList<>();
    List<Double> event = new ArrayList<>();
    List<Double> served = new ArrayList<>();
    for (Results.Entry e : r.sweep("recovery")) {
      for (JsonObject p : e.points()) {
        categories.add(e.label() + ", " + e.variant() + ": " + p.getString("label", "fault"));
        event.add(extra(p, "toEventMs"));
        served.add(p.getDouble("value"));
      }
    }
    return Chart.bars("recovery", "From a fault to a ready device (median)", "kill -9 of the device host, or a "
        + "poisoned context; with and without a spare device host", new Axis("time", Scale.LINEAR, Format.MILLISECONDS),
      categories, List.of(new Group("generation changed", 0xFDAE6B, event.stream().mapToDouble(d -> d).toArray()),
        new Group("first request served", 0xE6550D, served.stream().mapToDouble(d -> d).toArray())), List.of());
  }

  /** The toolkit's cost relative to raw JCuda and to PyTorch, for each headline. */
  private static Chart ratios(Results r) {
    List<Figures.Row> rows = Figures.headlines(r);
    Map<String, double[]> groups = new LinkedHashMap<>();
    String[][] pairs = {{"vertx.in_process", "raw-jcuda"}, {"vertx.process", "raw-jcuda"},
      {"vertx.in_process", "pytorch"}, {"vertx.process", "pytorch"}};
    for (String[] pair : pairs) {
      double[] v = rows.stream().mapToDouble(row -> Optional.ofNullable(row.ratio(pair[0], pair[1])).orElse(Double.NaN))
        .toArray();
      if (Arrays.stream(v).anyMatch(Double::isFinite)) {
        groups.put(Results.pathName(pair[0]) + " / " + Results.pathName(pair[1]), v);
      }
    }
    int[] shades = {0x1F77B4, 0xFF7F0E, 0x9ECAE1, 0xFDD0A2};
    List<Group> bars = new ArrayList<>();
    int i = 0;
    for (Map.Entry<String, double[]> g : groups.entrySet()) {
      bars.add(new Group(g.getKey(), shades[i++ % shades.length], g.getValue()));
    }
    return Chart.bars("ratios", "The toolkit's cost relative to raw JCuda and to PyTorch",
      "time over theirs (for rates and bandwidth: theirs over the toolkit's); 1 = the same, above 1 = slower",
      new Axis("relative cost", Scale.LOG, Format.RATIO), rows.stream().map(Figures.Row::label).toList(), bars,
      List.of(new Rule(1, "same")));
  }

  private static Chart jmh(Results r) {
    List<String> categories = new ArrayList<>();
    List<Double> values = new ArrayList<>();
    for (Results.Entry e : r.entries) {
      if (!e.path().equals("jmh")) {
        continue;
      }
      for (JsonObject p : e.points()) {
        categories.add(e.sweep().replace("jmh.", "") + ": " + p.getString("label", String.valueOf(p.getValue("x"))));
        values.add(p.getDouble("value"));
      }
    }
    return Chart.bars("jmh", "CPU microbenchmarks (JMH), time per operation", "codecs, link frames, registry lookups,"
        + " the submission queue; no GPU", new Axis("time per operation", Scale.LOG, Format.NANOSECONDS), categories,
      List.of(new Group("ns/op", JMH, values.stream().mapToDouble(d -> d).toArray())), List.of());
  }

  private static Line line(String label, Results.Entry e, double[] dash, ToDoubleFunction<JsonObject> y) {
    List<JsonObject> points = e.points();
    return new Line(label, color(e.path()), dash, dash == null ? 2.2 : 1.6,
      points.stream().mapToDouble(p -> p.getDouble("x")).toArray(), points.stream().mapToDouble(y).toArray());
  }

  /** Solid for a path's first variant in the chart, then dashed, then dotted. */
  private static double[] dash(Results.Entry e, List<Results.Entry> entries) {
    List<String> mine = entries.stream().filter(o -> o.path().equals(e.path())).map(Results.Entry::variant).distinct()
      .toList();
    int i = mine.indexOf(e.variant());
    return i <= 0 ? null : i == 1 ? DASHED : DOTTED;
  }

  private static long variants(List<Results.Entry> entries, String path) {
    return entries.stream().filter(e -> e.path().equals(path)).map(Results.Entry::variant).distinct().count();
  }

  private static double latency(JsonObject p, String key) {
    JsonObject l = p.getJsonObject("latency");
    return l == null ? Double.NaN : l.getDouble(key);
  }

  private static double extra(JsonObject p, String key) {
    JsonObject x = p.getJsonObject("extra");
    return x == null || x.getValue(key) == null ? Double.NaN : x.getDouble(key);
  }
}
