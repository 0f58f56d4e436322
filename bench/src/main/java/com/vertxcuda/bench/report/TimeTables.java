package com.vertxcuda.bench.report;

import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static com.vertxcuda.bench.report.Tables.value;

/**
 * The tables that say whether the toolkit is within reach of raw JCuda, given the repeats' spread,
 * and where its time goes where it is not: each headline op's request one at a time, hop by hop.
 */
final class TimeTables {

  /** The ops with a hop table: their name in the report, and the sweep that holds it. */
  private static final Map<String, String> HOP_SWEEPS = Map.of("roundtrip.fill", "1 KiB fill", "hops.fft", "FFT C2C",
    "hops.rng", "uniform RNG", "hops.gemm", "GEMM TF32");
  private static final List<String> HOP_ORDER = List.of("roundtrip.fill", "hops.fft", "hops.rng", "hops.gemm");
  /** Paths that are hops of the toolkit's own request path (PyTorch and diagnostics are not). */
  private static final List<String> HOP_PATHS = List.of("raw-jcuda", "context", "vertx.tier", "vertx.in_process",
    "vertx.process");

  private TimeTables() {
  }

  /** The hop table of a headline, by its sweep (and the GEMM's precision), or null. */
  private static String hopTable(Figures.Headline h) {
    switch (h.sweep()) {
      case "roundtrip.fill":
        return HOP_SWEEPS.get("roundtrip.fill");
      case "fft.c2c":
        return HOP_SWEEPS.get("hops.fft");
      case "rng.uniform":
        return HOP_SWEEPS.get("hops.rng");
      case "gemm.latency":
        return h.toolkitVariant().equals("TF32") ? HOP_SWEEPS.get("hops.gemm") : null;
      default:
        return null;
    }
  }

  /**
   * Per headline, the toolkit's cost over raw JCuda (and PyTorch): the ratio of the medians, the range
   * it takes within the repeats, and whether it is within 5 % beyond that spread.
   */
  static Tables.Table ratios(Results r) {
    List<List<String>> rows = new ArrayList<>();
    for (Figures.Row row : Figures.headlines(r)) {
      for (String reference : Figures.REFERENCES) {
        for (String path : Figures.TOOLKIT) {
          Double ratio = row.ratio(path, reference);
          if (ratio == null) {
            continue;
          }
          double[] range = row.ratioRange(path, reference);
          boolean spread = row.spreads().containsKey(path) || row.spreads().containsKey(reference);
          String verdict = range[1] <= Figures.CROSSOVER_RATIO ? "yes"
            : range[0] > Figures.CROSSOVER_RATIO ? "no" : "within the spread";
          String hops = row.headline() == null || verdict.equals("yes") ? "" : hopTable(row.headline());
          rows.add(List.of(row.label(), Results.pathName(path), Results.pathName(reference),
            String.format(Locale.ROOT, "%.3f", ratio),
            spread ? String.format(Locale.ROOT, "%.3f \u2013 %.3f", range[0], range[1]) : "(measured once)",
            verdict, hops == null ? "" : hops));
        }
      }
    }
    return new Tables.Table("Toolkit over the reference, with the repeats' spread", "the toolkit's cost over raw JCuda "
      + "(and PyTorch), median against median; the range puts each side's lowest and highest repeat against the "
      + "other's; within 5 %: yes when the whole range is at most 1.05, no when all of it is above; where it is not "
      + "yes, the last column names the op's table in \"Where the time goes\"", List.of("figure", "toolkit",
      "against", "ratio", "range over the repeats", "within 5 %", "where the time goes"), rows);
  }

  /**
   * Each op one request at a time, hop by hop, both modes: p50 and p99 of each hop, and what it adds
   * over the row above.
   */
  static Tables.Table whereTheTimeGoes(Results r) {
    List<List<String>> rows = new ArrayList<>();
    for (String sweep : HOP_ORDER) {
      double[] above = null;
      for (Results.Entry e : r.sweep(sweep)) {
        if (!HOP_PATHS.contains(e.path())) {
          continue;
        }
        for (JsonObject p : e.points()) {
          JsonObject l = p.getJsonObject("latency");
          if (l == null) {
            continue;
          }
          double p50 = l.getDouble("p50", 0.0);
          double p99 = l.getDouble("p99", 0.0);
          String size = sweep.equals("roundtrip.fill") ? "" : " " + (sweep.equals("hops.gemm")
            ? String.valueOf(Math.round(p.getDouble("x"))) : Figures.size(p.getDouble("x")));
          rows.add(List.of(HOP_SWEEPS.get(sweep) + size, e.label(), e.variant(), value(p50, "us"), value(p99, "us"),
            above == null ? "" : added(p50 - above[0]), above == null ? "" : added(p99 - above[1]),
            String.valueOf(p.getValue("runs"))));
          above = new double[] {p50, p99};
        }
      }
    }
    return new Tables.Table("Where the time goes, hop by hop", "each op one request at a time, one hop added per row: raw JCuda "
      + "(the call and a synchronize; then completed by a host function instead), the call on the backend's context "
      + "with its own completion path, the request straight into the context tier's queue (no event bus), through the "
      + "device verticle with the typed client in-process, then through the device host (process isolation); "
      + "\"added\" is over the row above: the host function's wake-up over a synchronize, the context's completion "
      + "path, the tier's queue and the library's dispatch, the device verticle and client, the device host",
      List.of("op", "path", "what", "p50", "p99", "p50 added", "p99 added", "runs"), rows);
  }

  /**
   * Per op, what each hop adds at p50 and p99, read off {@link #whereTheTimeGoes}'s rows: the
   * completion wake-up (the context's completion path over a raw synchronize), the context tier's
   * queue and the library's dispatch, the device verticle and typed client, the device host; and
   * the whole of it, the toolkit over raw.
   */
  static Tables.Table hopCosts(Results r) {
    List<List<String>> rows = new ArrayList<>();
    for (String sweep : HOP_ORDER) {
      JsonObject raw = hop(r, sweep, "raw-jcuda");
      JsonObject context = hop(r, sweep, "context");
      JsonObject tier = hop(r, sweep, "vertx.tier");
      JsonObject inProcess = hop(r, sweep, "vertx.in_process");
      JsonObject process = hop(r, sweep, "vertx.process");
      if (tier == null && inProcess == null && process == null) {
        continue;
      }
      JsonObject toolkit = process != null ? process : inProcess;
      rows.add(List.of(HOP_SWEEPS.get(sweep), both(raw, raw == null ? null : new JsonObject()),
        both(context, raw), both(tier, context), both(inProcess, tier), both(process, inProcess), both(toolkit, raw)));
    }
    return new Tables.Table("Where the time goes: what each hop adds", "each hop's cost over the one below it, p50 / p99, from the table below: "
      + "the completion wake-up (the call completed through the context's own path against raw JCuda's call and "
      + "synchronize), the context tier's queue with the library's dispatch, the device verticle with the typed client, "
      + "the device host; the last column is the whole, the toolkit (process isolation where measured) over raw",
      List.of("op", "raw call + synchronize", "completion wake-up", "context tier", "device verticle + client",
        "device host", "toolkit over raw"), rows);
  }

  /** The latency of {@code path}'s first series of the sweep (raw JCuda's: the call + synchronize), or null. */
  private static JsonObject hop(Results r, String sweep, String path) {
    return r.sweep(sweep).stream().filter(e -> e.path().equals(path) && !e.points().isEmpty()).findFirst()
      .map(e -> e.points().get(0).getJsonObject("latency")).orElse(null);
  }

  /** "+p50 / +p99" of {@code hop} over {@code below} (an empty {@code below}: the hop's own figures), or empty. */
  private static String both(JsonObject hop, JsonObject below) {
    if (hop == null || below == null) {
      return "";
    }
    if (below.isEmpty()) {
      return value(hop.getDouble("p50", 0.0), "us") + " / " + value(hop.getDouble("p99", 0.0), "us");
    }
    return added(hop.getDouble("p50", 0.0) - below.getDouble("p50", 0.0)) + " / "
      + added(hop.getDouble("p99", 0.0) - below.getDouble("p99", 0.0));
  }

  private static String added(double us) {
    return (us >= 0 ? "+" : "\u2212") + value(Math.abs(us), "us");
  }
}
