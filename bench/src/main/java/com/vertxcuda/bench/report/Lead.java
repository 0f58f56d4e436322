package com.vertxcuda.bench.report;

import java.util.List;
import java.util.Objects;

/** What both forms of the report lead with, in order: a table, and the chart that goes under it (or none). */
record Lead(Tables.Table table, String chart) {

  static List<Lead> of(Results r) {
    return List.of(new Lead(Tables.runs(r), null), new Lead(Tables.headlines(r), "ratios"),
      new Lead(TimeTables.ratios(r), null), new Lead(Tables.crossovers(r), "gemm-overhead"),
      new Lead(Tables.batchedGemm(r), null),
      new Lead(Tables.hops(r), "latency-cdf"), new Lead(TimeTables.hopCosts(r), null),
      new Lead(TimeTables.whereTheTimeGoes(r), null),
      new Lead(Tables.recovery(r), "recovery"), new Lead(Tables.graph(r), "graph"),
      new Lead(HostCopyTables.uploads(r), "copy-h2d"), new Lead(HostCopyTables.downloads(r), "copy-d2h"));
  }

  /** Whether a lead shows {@code chart} already. */
  static boolean shows(List<Lead> leads, String chart) {
    return leads.stream().anyMatch(l -> Objects.equals(l.chart(), chart));
  }
}
