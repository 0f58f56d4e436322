package com.vertxcuda.bench.result;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * One run's results in the benchmark JSON schema ({@code bench/SCHEMA.md}, checked by
 * {@link #SCHEMA_RESOURCE}): what ran where, the measured series, and what was skipped and why.
 * BenchMain, the PyTorch script and the JMH runner all write it; BenchReport reads any number of them.
 */
public final class BenchRecord {

  /** The value of the document's {@code schema} field. */
  public static final String SCHEMA = "vertx-cuda-bench/1";
  /** The JSON Schema on the class path. */
  public static final String SCHEMA_RESOURCE = "/com/vertxcuda/bench/bench-result.schema.json";

  private final JsonObject run = new JsonObject();
  private final JsonArray series = new JsonArray();
  private final JsonArray skipped = new JsonArray();
  private final long started = System.nanoTime();

  /**
   * A record for a run of {@code tool} ({@code BenchMain}, {@code pytorch_bench.py}, {@code JmhMain}) at
   * {@code commit}, on {@code backend} ({@code cuda}, {@code host}, {@code cpu}) with sweep sizes {@code size}.
   */
  public BenchRecord(String tool, String commit, String backend, String size) {
    run.put("tool", tool).put("commit", commit).put("date", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString())
      .put("backend", backend).put("size", size)
      .put("host", new JsonObject().put("name", hostName()).put("os", System.getProperty("os.name") + " "
        + System.getProperty("os.version")).put("cores", Runtime.getRuntime().availableProcessors())
        .put("java", System.getProperty("java.version")));
  }

  /** The run's facts (isolation, device, arguments); add to it freely within the schema. */
  public JsonObject run() {
    return run;
  }

  /**
   * A new series: {@code path} measured over {@code sweep} (a chart), {@code variant} telling its lines
   * apart within a path; {@code kind} and {@code unit} say what the points' values are.
   */
  public Series series(String sweep, String path, String variant, String kind, String unit, String xName,
                       String xUnit) {
    Series s = new Series(sweep, path, variant, kind, unit, xName, xUnit);
    series.add(s.json());
    return s;
  }

  /** Notes that {@code path} did not measure (all or part of) {@code sweep}, and why. */
  public void skip(String sweep, String path, String reason) {
    skipped.add(new JsonObject().put("sweep", sweep).put("path", path).put("reason", reason));
  }

  /** The document, with the run's wall time so far; series without points are left out. */
  public JsonObject toJson() {
    run.put("wallSeconds", Math.round((System.nanoTime() - started) / 1e7) / 100.0);
    JsonArray measured = new JsonArray();
    series.stream().map(JsonObject.class::cast).filter(s -> !s.getJsonArray("points").isEmpty())
      .forEach(measured::add);
    return new JsonObject().put("schema", SCHEMA).put("run", run).put("series", measured).put("skipped", skipped);
  }

  public void write(Path file) throws IOException {
    Files.createDirectories(file.toAbsolutePath().getParent());
    Files.writeString(file, toJson().encodePrettily() + "\n", StandardCharsets.UTF_8);
  }

  private static String hostName() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return "unknown";
    }
  }
}
