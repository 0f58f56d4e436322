package com.vertxcuda.bench.report;

import java.util.List;

import static com.vertxcuda.bench.report.SvgCanvas.escape;

/**
 * The report as one self-contained HTML page: the tables, every chart as inline SVG, and every
 * point of every sweep in folded tables. No script, no external style or font.
 */
final class HtmlReport {

  private static final String STYLE = String.join("\n",
    "body{font-family:'DejaVu Sans',Verdana,Arial,sans-serif;margin:24px auto;max-width:1000px;color:#222}",
    "h1{font-size:22px}h2{font-size:17px;margin-top:32px}p.note{color:#666;font-size:13px}",
    "table{border-collapse:collapse;font-size:12px;margin:8px 0}",
    "th,td{border:1px solid #ddd;padding:3px 7px;text-align:left}th{background:#f4f4f4}",
    "td:not(:first-child){font-variant-numeric:tabular-nums}",
    "figure{margin:18px 0}svg{max-width:100%;height:auto;border:1px solid #eee}",
    "details{margin:6px 0}summary{cursor:pointer;font-size:13px}");

  private HtmlReport() {
  }

  static String of(Results r, List<Chart> charts) {
    StringBuilder h = new StringBuilder("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      + "<title>vertx-cuda benchmark report</title><style>" + STYLE + "</style></head><body>\n");
    h.append("<h1>vertx-cuda benchmark report</h1>\n<p class=\"note\">Made by BenchReport from ").append(r.runs.size())
      .append(" result file(s). Latencies are HdrHistogram distributions without the warm-up runs; each figure"
        + " gives its run count.</p>\n");
    List<Lead> leads = Lead.of(r);
    for (Lead lead : leads) {
      table(h, lead.table());
      if (!lead.table().rows().isEmpty() && lead.chart() != null) {
        chart(h, charts, lead.chart());
      }
    }
    h.append("<h2>Charts</h2>\n");
    for (Chart c : charts) {
      if (!Lead.shows(leads, c.name)) {
        chart(h, charts, c.name);
      }
    }
    h.append("<h2>Every point</h2>\n");
    r.entries.stream().map(Results.Entry::sweep).distinct().forEach(sweep -> {
      h.append("<details><summary>").append(escape(sweep)).append("</summary>\n");
      table(h, Tables.sweep(r, sweep));
      h.append("</details>\n");
    });
    table(h, Tables.skipped(r));
    return h.append("</body></html>\n").toString();
  }

  private static void chart(StringBuilder h, List<Chart> charts, String name) {
    charts.stream().filter(c -> c.name.equals(name)).findFirst().ifPresent(c -> h.append("<figure id=\"")
      .append(c.name).append("\">").append(c.svg()).append("</figure>\n"));
  }

  private static void table(StringBuilder h, Tables.Table t) {
    if (t.rows().isEmpty()) {
      return;
    }
    h.append("<h2>").append(escape(t.title())).append("</h2>\n");
    if (t.note() != null) {
      h.append("<p class=\"note\">").append(escape(MarkdownReport.capitalised(t.note()))).append(".</p>\n");
    }
    h.append("<table><tr>");
    t.header().forEach(c -> h.append("<th>").append(escape(c)).append("</th>"));
    h.append("</tr>\n");
    for (List<String> row : t.rows()) {
      h.append("<tr>");
      row.forEach(c -> h.append("<td>").append(escape(c)).append("</td>"));
      h.append("</tr>\n");
    }
    h.append("</table>\n");
  }
}
