package com.vertxcuda.jmh;

import com.vertxcuda.bench.result.BenchRecord;
import com.vertxcuda.bench.result.Series;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;
import org.openjdk.jmh.annotations.Mode;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the JMH microbenchmarks and writes their results in the benchmark JSON schema as
 * {@code jmh.json}, for BenchReport beside the GPU runs.
 *
 * <p>usage: {@code JmhMain [--smoke] [--out DIR] [--commit ID] [--include REGEX]}; {@code --smoke}
 * measures each benchmark for a fraction of a second in this JVM (CI), otherwise one fork each with
 * 3 warm-up and 5 measured iterations of a second.
 */
public final class JmhMain {

  private JmhMain() {
  }

  public static void main(String[] args) throws Exception {
    boolean smoke = false;
    Path out = Path.of("bench-out");
    String commit = "unknown";
    String include = JmhMain.class.getPackageName() + "|com.vertxcuda.device.isolation";
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--smoke" -> smoke = true;
        case "--out" -> out = Path.of(args[++i]);
        case "--commit" -> commit = args[++i];
        case "--include" -> include = args[++i];
        default -> {
          System.err.println("usage: JmhMain [--smoke] [--out DIR] [--commit ID] [--include REGEX]");
          System.exit(2);
        }
      }
    }
    System.out.println("wrote " + run(smoke, include, out, commit));
  }

  /** Runs the benchmarks matching {@code include}; returns the JSON file written into {@code out}. */
  public static Path run(boolean smoke, String include, Path out, String commit) throws RunnerException, IOException {
    ChainedOptionsBuilder options = new OptionsBuilder().include(include).mode(Mode.AverageTime)
      .timeUnit(TimeUnit.NANOSECONDS).threads(1).shouldFailOnError(true);
    if (smoke) {
      options.forks(0).verbosity(VerboseMode.SILENT).warmupIterations(1).warmupTime(TimeValue.milliseconds(100)).measurementIterations(2)
        .measurementTime(TimeValue.milliseconds(100));
    } else {
      options.forks(1).warmupIterations(3).warmupTime(TimeValue.seconds(1)).measurementIterations(5)
        .measurementTime(TimeValue.seconds(1));
    }
    Collection<RunResult> results = new Runner(options.build()).run();
    BenchRecord record = new BenchRecord("JmhMain", commit, "cpu", smoke ? "smoke" : "full");
    record.run().put("arguments", new JsonArray(List.of("include=" + include)));
    Map<String, Series> series = new LinkedHashMap<>();
    for (RunResult r : results) {
      String benchmark = r.getParams().getBenchmark();
      String[] parts = benchmark.split("\\.");
      String sweep = "jmh." + parts[parts.length - 2].replace("Benchmarks", "").toLowerCase(Locale.ROOT);
      Series s = series.computeIfAbsent(sweep, k -> record.series(k, "jmh", "average time", "time", "ns",
        "benchmark", ""));
      StringBuilder label = new StringBuilder(parts[parts.length - 1]);
      for (String key : r.getParams().getParamsKeys()) {
        label.append(' ').append(key).append('=').append(r.getParams().getParam(key));
      }
      Result<?> primary = r.getPrimaryResult();
      long ops = 0;
      for (var b : r.getBenchmarkResults()) {
        for (IterationResult it : b.getIterationResults()) {
          ops += it.getMetadata().getMeasuredOps();
        }
      }
      JsonObject p = s.add(s.size(), Math.max(1, ops), 0, primary.getScore()).put("label", label.toString());
      JsonObject extra = new JsonObject().put("iterations", primary.getSampleCount());
      if (Double.isFinite(primary.getScoreError())) {
        extra.put("error", Series.round(primary.getScoreError()));
      }
      p.put("extra", extra);
    }
    Path file = out.resolve("jmh.json");
    record.write(file);
    return file;
  }
}
