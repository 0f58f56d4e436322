package com.vertxcuda.bench.report;

import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The report's tables, as rows of text, for the Markdown and the HTML alike. */
final class Tables {

  /** A table: a title, a line saying how to read it, a header and rows. */
  record Table(String title, String note, List<String> header, List<List<String>> rows) {
  }

  private Tables() {
  }

  static Table runs(Results r) {
    List<List<String>> rows = new ArrayList<>();
    for (Results.Run run : r.runs) {
      JsonObject j = run.run();
      JsonObject device = j.getJsonObject("device", new JsonObject());
      rows.add(List.of(run.file().getFileName().toString(), j.getString("tool", ""), run.commit(),
        j.getString("date", ""), j.getString("backend", ""), j.getString("isolation", "") == null ? ""
          : j.getString("isolation", ""), device.getString("name", ""), j.getString("transport", ""),
        j.getString("size", ""), String.valueOf(j.getValue("wallSeconds", ""))));
    }
    return new Table("Runs", "the files this report was made from", List.of("file", "tool", "commit", "date",
      "backend", "isolation", "device", "callers' transport", "sizes", "wall s"), rows);
  }

  /** The paths a headline row gives a figure of, in its columns' order. */
  private static final String[] FIGURE_PATHS = {"raw-jcuda", "vertx.in_process", "vertx.process", "pytorch"};

  /**
   * A row's label and figures, each path's with its repeats' spread, then the toolkit's cost over each
   * reference.
   */
  private static List<String> figures(Figures.Row row) {
    List<String> cells = new ArrayList<>(List.of(row.label()));
    for (String p : FIGURE_PATHS) {
      Double v = row.values().get(p);
      double[] range = row.spreads().get(p);
      String via = row.via().get(p);
      cells.add((v == null ? "" : range == null ? value(v, row.unit())
        : value(v, row.unit()) + " (" + value(range[0], row.unit()) + " \u2013 " + value(range[1], row.unit()) + ")")
        + (via == null ? "" : ", from " + via));
    }
    for (String reference : Figures.REFERENCES) {
      for (String t : Figures.TOOLKIT) {
        Double ratio = row.ratio(t, reference);
        cells.add(ratio == null ? "" : String.format(Locale.ROOT, "%.3f", ratio));
      }
    }
    return cells;
  }

  /** The header of {@link #figures}' cells. */
  private static final List<String> FIGURE_HEADER = List.of("raw JCuda", "in-process", "process", "PyTorch",
    "in-process / raw", "process / raw", "in-process / PyTorch", "process / PyTorch");

  static Table headlines(Results r) {
    List<List<String>> rows = new ArrayList<>();
    for (Figures.Row row : Figures.headlines(r)) {
      List<String> cells = figures(row);
      Figures.Goal goal = row.goal();
      cells.add(goal == null ? "" : goal.text(row));
      for (String t : Figures.TOOLKIT) {
        cells.add(goal == null ? "" : goal.verdict(row, t));
      }
      rows.add(cells);
    }
    return new Table("Headline figures", "each at one size through every path; a repeated point shows its median "
      + "and, in brackets, its lowest and highest repeat (\"from\" names the toolkit's buffer where a row takes the "
      + "best of several); the ratios are the toolkit's cost over "
      + "the other's (time over time; for rates and bandwidth, theirs over the toolkit's): 1 = the same, above 1 = "
      + "slower; where a row has a goal, met: yes when the whole spread of the repeats meets it, no when none of it "
      + "does", header("figure", FIGURE_HEADER, "goal", "in-process met", "process met"), rows);
  }

  private static List<String> header(String first, List<String> middle, String... last) {
    List<String> h = new ArrayList<>(List.of(first));
    h.addAll(middle);
    h.addAll(List.of(last));
    return h;
  }

  /**
   * The pointer-array batched GEMMs ({@code gemm.batched}): per shape, GEMMs per second one call at
   * a time through every path, with the toolkit's cost over raw JCuda and PyTorch.
   */
  static Table batchedGemm(Results r) {
    List<List<String>> rows = new ArrayList<>();
    for (Figures.Row row : Figures.batchedGemms(r)) {
      rows.add(figures(row));
    }
    return new Table("Pointer-array batched GEMM", "F32, one batched call at a time, each answered before the next: "
      + "GEMMs per second (the toolkit: one GEMM_BATCHED_EX request over views of one buffer per operand; raw JCuda: "
      + "cublasGemmBatchedEx over device arrays of pointers; PyTorch: torch.bmm over a strided batch); the ratios are "
      + "the toolkit's cost, theirs over the toolkit's rate: above 1 = slower", header("GEMMs", FIGURE_HEADER), rows);
  }

  static Table crossovers(Results r) {
    List<List<String>> rows = new ArrayList<>();
    for (Figures.Crossover c : Figures.crossovers(r)) {
      rows.add(List.of(c.precision(), Results.pathName(c.path()), Results.pathName(c.reference()),
        c.from() == null ? "not within 5 % up to " + Math.round(c.largest()) : String.valueOf(Math.round(c.from())),
        String.format(Locale.ROOT, "%.3f at %d", c.ratioAtLargest(), Math.round(c.largest()))));
    }
    return new Table("GEMM: where the toolkit's overhead falls under 5 %", "the smallest m = n = k from which every "
      + "larger size, one GEMM at a time (p50), costs at most 1.05 times the reference", List.of("precision", "toolkit",
      "against", "within 5 % from", "ratio at the largest size"), rows);
  }

  static Table hops(Results r) {
    List<List<String>> rows = new ArrayList<>();
    for (Results.Entry e : r.sweep("roundtrip.fill")) {
      for (JsonObject p : e.points()) {
        JsonObject l = p.getJsonObject("latency", new JsonObject());
        rows.add(List.of(e.label(), e.variant(), value(l.getDouble("p50", 0.0), "us"), value(l.getDouble("p99", 0.0),
          "us"), value(l.getDouble("p999", 0.0), "us"), String.valueOf(p.getValue("runs"))));
      }
    }
    return new Table("1 KiB fill round trip, hop by hop", "each row adds hops to the one above it", List.of("path",
      "what", "p50", "p99", "p99.9", "runs"), rows);
  }

  /**
   * The 10-step pipelines (small operations; FFT and RNG): ten requests against one replay, per path
   * and buffer size, with the speedups.
   */
  static Table graph(Results r) {
    List<List<String>> rows = new ArrayList<>();
    for (String sweep : List.of("graph.pipeline", "graph.spectral")) {
      graphRows(r, sweep, sweep.equals("graph.pipeline") ? "small ops" : "FFT and RNG", rows);
    }
    return new Table("Recorded pipeline: 10 requests against one replay", "a 10-step pipeline per buffer size, of "
      + "small ops (fills, a copy, AXPY, SCAL, built-in kernels) or of FFT and RNG steps (uniforms, normals, R2C and "
      + "C2R, complex products, built-in kernels), one pipeline at a time: sent as 10 requests back to back, "
      + "or each sent when the one before is answered (awaited), or recorded once and replayed as one request; "
      + "speedup = 10 requests over replay", List.of("pipeline", "path", "buffer", "10 requests p50", "10 requests p99",
      "awaited p50", "replay p50", "replay p99", "speedup p50", "speedup p99", "speedup p50 vs awaited", "replayed as",
      "runs"), rows);
  }

  private static void graphRows(Results r, String sweep, String pipeline, List<List<String>> rows) {
    List<Results.Entry> entries = r.sweep(sweep);
    for (Results.Entry replay : entries) {
      if (!replay.variant().equals("replay")) {
        continue;
      }
      Results.Entry alone = entries.stream().filter(e -> e.path().equals(replay.path())
        && e.run().equals(replay.run()) && e.variant().equals("10 requests")).findFirst().orElse(null);
      Results.Entry chained = entries.stream().filter(e -> e.path().equals(replay.path())
        && e.run().equals(replay.run()) && e.variant().equals("10 requests, each awaited")).findFirst().orElse(null);
      for (JsonObject p : replay.points()) {
        JsonObject l = p.getJsonObject("latency", new JsonObject());
        JsonObject extra = p.getJsonObject("extra", new JsonObject());
        JsonObject a = alone == null ? null : alone.at(p.getDouble("x")).orElse(null);
        JsonObject al = a == null ? new JsonObject() : a.getJsonObject("latency", new JsonObject());
        JsonObject c = chained == null ? null : chained.at(p.getDouble("x")).orElse(null);
        JsonObject cl = c == null ? new JsonObject() : c.getJsonObject("latency", new JsonObject());
        rows.add(List.of(pipeline, replay.label(), Axis.number(p.getDouble("x")) + " B",
          a == null ? "" : value(al.getDouble("p50", 0.0), "us"), a == null ? "" : value(al.getDouble("p99", 0.0), "us"),
          c == null ? "" : value(cl.getDouble("p50", 0.0), "us"),
          value(l.getDouble("p50", 0.0), "us"), value(l.getDouble("p99", 0.0), "us"),
          String.format(Locale.ROOT, "%.2f", extra.getDouble("speedupP50", 0.0)),
          String.format(Locale.ROOT, "%.2f", extra.getDouble("speedupP99", 0.0)),
          c == null ? "" : String.format(Locale.ROOT, "%.2f", extra.getDouble("speedupP50AgainstAwaited", 0.0)),
          extra.getDouble("captured", 0.0) > 0 ? "CUDA graph" : "step by step", String.valueOf(p.getValue("runs"))));
      }
    }
  }

  static Table recovery(Results r) {
    List<List<String>> rows = new ArrayList<>();
    for (Results.Entry e : r.sweep("recovery")) {
      for (JsonObject p : e.points()) {
        JsonObject extra = p.getJsonObject("extra", new JsonObject());
        JsonObject l = p.getJsonObject("latency", new JsonObject());
        rows.add(List.of(e.label(), e.variant(), p.getString("label", ""), value(extra.getDouble("toEventMs", 0.0), "ms"),
          value(p.getDouble("value"), "ms"), value(l.getDouble("max", 0.0), "ms"), String.valueOf(p.getValue("runs"))));
      }
    }
    return new Table("Recovery", "from the fault to the generation-changed event and to the first request served "
      + "(medians; max of the latter)", List.of("path", "device host", "fault", "generation changed",
      "first request served", "max", "runs"), rows);
  }

  static Table skipped(Results r) {
    List<List<String>> rows = new ArrayList<>();
    for (JsonObject s : r.skipped) {
      rows.add(List.of(s.getString("file"), s.getString("sweep"), s.getString("path"), s.getString("reason")));
    }
    return new Table("Not measured", "what a run left out, and why", List.of("file", "sweep", "path", "reason"), rows);
  }

  /** Every point of one sweep. */
  static Table sweep(Results r, String sweep) {
    List<List<String>> rows = new ArrayList<>();
    for (Results.Entry e : r.sweep(sweep)) {
      String unit = e.json().getString("unit");
      for (JsonObject p : e.points()) {
        JsonObject l = p.getJsonObject("latency");
        String lu = l == null ? "" : l.getString("unit");
        rows.add(List.of(e.label(), e.variant(), p.containsKey("label") ? p.getString("label")
            : Axis.number(p.getDouble("x")), Figures.spread(p).map(range -> value(p.getDouble("value"), unit) + " ("
            + value(range[0], unit) + " \u2013 " + value(range[1], unit) + ")").orElse(value(p.getDouble("value"), unit)),
          l == null ? "" : value(l.getDouble("p50"), lu), l == null ? "" : value(l.getDouble("p99"), lu),
          l == null ? "" : value(l.getDouble("p999"), lu), String.valueOf(p.getValue("runs")),
          String.valueOf(p.getValue("warmup", ""))));
      }
    }
    String x = r.sweep(sweep).isEmpty() ? "x" : r.sweep(sweep).get(0).json().getJsonObject("x").getString("name");
    return new Table(sweep, null, List.of("path", "variant", x, "value", "p50", "p99", "p99.9", "runs", "warm-up"),
      rows);
  }

  /** A value with its unit, as people read it (microseconds past a thousand in ms, rates in k or M per second). */
  static String value(double v, String unit) {
    switch (unit) {
      case "us":
        return v >= 1e3 ? String.format(Locale.ROOT, "%.2f ms", v / 1e3) : String.format(Locale.ROOT, "%.1f \u00b5s", v);
      case "ms":
        return String.format(Locale.ROOT, "%.0f ms", v);
      case "ns":
        return String.format(Locale.ROOT, "%.1f ns", v);
      case "GB/s":
        return String.format(Locale.ROOT, "%.2f GB/s", v);
      case "1/s":
        return v >= 1e6 ? String.format(Locale.ROOT, "%.2fM/s", v / 1e6) : String.format(Locale.ROOT, "%.1fk/s", v / 1e3);
      default:
        return Axis.number(v) + " " + unit;
    }
  }
}
