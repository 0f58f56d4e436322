package com.vertxcuda.bench.report;

import java.util.List;
import java.util.stream.Collectors;

/** The report's Markdown summary: the tables that lead, and the charts as the PNG copies beside it. */
final class MarkdownReport {

  private MarkdownReport() {
  }

  static String of(Results r, List<Chart> charts) {
    StringBuilder md = new StringBuilder("# vertx-cuda benchmark report\n\n");
    md.append("Made by `BenchReport` from ").append(r.runs.size()).append(" result file(s); the same with every "
      + "point and the charts as SVG is in `report.html`.\n\n");
    for (Lead lead : Lead.of(r)) {
      table(md, lead.table());
      if (!lead.table().rows().isEmpty() && lead.chart() != null) {
        image(md, charts, lead.chart());
      }
    }
    md.append("## Charts\n\n");
    for (Chart c : charts) {
      md.append("- [").append(c.title).append("](").append(c.name).append(".png)\n");
    }
    md.append('\n');
    table(md, Tables.skipped(r));
    return md.toString();
  }

  private static void table(StringBuilder md, Tables.Table t) {
    if (t.rows().isEmpty()) {
      return;
    }
    md.append("## ").append(t.title()).append("\n\n");
    if (t.note() != null) {
      md.append(capitalised(t.note())).append(".\n\n");
    }
    md.append(row(t.header())).append(t.header().stream().map(h -> "---").collect(Collectors.joining("|", "|", "|\n")));
    t.rows().forEach(cells -> md.append(row(cells)));
    md.append('\n');
  }

  private static String row(List<String> cells) {
    return cells.stream().map(c -> c.replace("|", "\\|")).collect(Collectors.joining(" | ", "| ", " |\n"));
  }

  private static void image(StringBuilder md, List<Chart> charts, String name) {
    charts.stream().filter(c -> c.name.equals(name)).findFirst()
      .ifPresent(c -> md.append("![").append(c.title).append("](").append(c.name).append(".png)\n\n"));
  }

  static String capitalised(String s) {
    return s.isEmpty() ? s : Character.toUpperCase(s.charAt(0)) + s.substring(1);
  }
}
