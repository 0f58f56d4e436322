package com.vertxcuda.cli;

import com.vertxcuda.bench.BenchMain;
import com.vertxcuda.bench.BenchOptions;
import com.vertxcuda.bench.report.BenchReport;
import io.vertx.core.json.JsonObject;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * The benchmark (BenchMain, with its options): a progress line per point while it runs, then its
 * JSON ({@code bench/SCHEMA.md}) and BenchReport's Markdown, HTML and charts beside it.
 */
@Command(name = "bench", description = "Benchmark the toolkit (BenchMain's options; --help lists them).")
final class Bench implements Callable<Integer> {

  @Unmatched
  List<String> args = new ArrayList<>();

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (args.contains("--help") || args.contains("-h")) {
      System.out.println(BenchOptions.USAGE.replace("usage: BenchMain", "usage: vertx-cuda bench")
        .replace("                 [", "                        ["));
      return 0;
    }
    String[] given = args.toArray(String[]::new);
    BenchOptions options;
    try {
      options = BenchOptions.parse(given);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage().lines().findFirst().orElse("bad arguments"));
    }
    JsonObject result = BenchMain.run(options, given);
    Path json = options.out().resolve("bench-" + options.modeName() + ".json");
    Path report = options.out().resolve("report");
    BenchReport.write(List.of(json), report);
    System.out.println("json: " + json);
    System.out.println("markdown: " + report.resolve("report.md") + " (HTML and charts beside it)");
    long failed = BenchMain.failures(result);
    if (failed > 0) {
      System.out.println(failed + " section(s) failed: see the skipped list in " + json);
    }
    return failed == 0 ? 0 : 1;
  }
}
