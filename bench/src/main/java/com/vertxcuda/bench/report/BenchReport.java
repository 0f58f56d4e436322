package com.vertxcuda.bench.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns benchmark results (BenchMain's {@code bench-<mode>.json}, the PyTorch script's
 * {@code pytorch.json}, JMH's {@code jmh.json}: any number of files, or folders of them) into
 * {@code report.md}, a self-contained {@code report.html} and a PNG of each chart, in one folder.
 *
 * <p>usage: {@code BenchReport [--out DIR] FILE-OR-FOLDER...} (default DIR: {@code report} beside the first)
 */
public final class BenchReport {

  private BenchReport() {
  }

  public static void main(String[] args) throws IOException {
    List<Path> inputs = new ArrayList<>();
    Path out = null;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--out") && i + 1 < args.length) {
        out = Path.of(args[++i]);
      } else if (args[i].startsWith("-")) {
        System.err.println("usage: BenchReport [--out DIR] FILE-OR-FOLDER...");
        System.exit(2);
      } else {
        inputs.add(Path.of(args[i]));
      }
    }
    if (inputs.isEmpty()) {
      System.err.println("usage: BenchReport [--out DIR] FILE-OR-FOLDER...");
      System.exit(2);
    }
    if (out == null) {
      Path first = inputs.get(0).toAbsolutePath();
      out = (Files.isDirectory(first) ? first : first.getParent()).resolve("report");
    }
    List<Path> written = write(inputs, out);
    System.out.println("report: " + written.size() + " files in " + out + " (" + out.resolve("report.html") + ")");
  }

  /** Writes the report of {@code inputs} into {@code out}; returns the files written. */
  public static List<Path> write(List<Path> inputs, Path out) throws IOException {
    Results results = Results.load(inputs);
    List<Chart> charts = Charts.all(results);
    Files.createDirectories(out);
    List<Path> written = new ArrayList<>();
    for (Chart c : charts) {
      written.add(Files.write(out.resolve(c.name + ".png"), c.png()));
    }
    written.add(Files.writeString(out.resolve("report.md"), MarkdownReport.of(results, charts), StandardCharsets.UTF_8));
    written.add(Files.writeString(out.resolve("report.html"), HtmlReport.of(results, charts), StandardCharsets.UTF_8));
    return written;
  }
}
