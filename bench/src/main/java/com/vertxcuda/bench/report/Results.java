package com.vertxcuda.bench.report;

import com.vertxcuda.bench.result.BenchRecord;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/** The series of one or more result files, each with the run it came from. */
final class Results {

  /** One file's run: its facts and where it came from. */
  record Run(Path file, JsonObject run) {

    String commit() {
      String c = run.getString("commit", "unknown");
      return c.length() > 8 ? c.substring(0, 8) : c;
    }
  }

  /** One series, with its run; {@code label} names its path (and its run, where another run has the same series). */
  record Entry(Run run, JsonObject json, String label) {

    String sweep() {
      return json.getString("sweep");
    }

    String path() {
      return json.getString("path");
    }

    String variant() {
      return json.getString("variant");
    }

    List<JsonObject> points() {
      List<JsonObject> points = new ArrayList<>();
      json.getJsonArray("points").forEach(p -> points.add((JsonObject) p));
      points.sort(Comparator.comparingDouble(p -> p.getDouble("x")));
      return points;
    }

    Optional<JsonObject> at(double x) {
      return points().stream().filter(p -> p.getDouble("x") == x).findFirst();
    }
  }

  /** The paths in the order charts and tables list them, with how people call them. */
  private static final String[][] PATHS = {
    {"raw-jcuda", "raw JCuda"}, {"context", "context alone"}, {"vertx.tier", "context tier (no event bus)"},
    {"vertx.in_process", "vertx-cuda in-process"}, {"vertx.process", "vertx-cuda process isolation"},
    {"pytorch", "PyTorch"}, {"jmh", "JMH"}, {"diagnostic", "diagnostic"}};

  final List<Run> runs = new ArrayList<>();
  final List<Entry> entries = new ArrayList<>();
  /** Every file's skipped notes, each with its run. */
  final List<JsonObject> skipped = new ArrayList<>();

  /** Reads the files (a folder: the {@code *.json} files in it). */
  static Results load(List<Path> paths) throws IOException {
    Results r = new Results();
    List<Path> files = new ArrayList<>();
    for (Path p : paths) {
      if (Files.isDirectory(p)) {
        try (Stream<Path> s = Files.list(p)) {
          s.filter(f -> f.toString().endsWith(".json")).sorted().forEach(files::add);
        }
      } else {
        files.add(p);
      }
    }
    List<JsonObject[]> raw = new ArrayList<>();
    for (Path f : files) {
      JsonObject doc = new JsonObject(Files.readString(f, StandardCharsets.UTF_8));
      if (!BenchRecord.SCHEMA.equals(doc.getString("schema"))) {
        throw new IllegalArgumentException(f + " is not a benchmark result (schema " + doc.getString("schema") + ")");
      }
      Run run = new Run(f, doc.getJsonObject("run"));
      r.runs.add(run);
      for (Object s : doc.getJsonArray("series", new JsonArray())) {
        raw.add(new JsonObject[] {(JsonObject) s, run.run()});
      }
      for (Object s : doc.getJsonArray("skipped", new JsonArray())) {
        r.skipped.add(((JsonObject) s).copy().put("file", f.getFileName().toString()));
      }
    }
    for (Run run : r.runs) {
      for (JsonObject[] s : raw) {
        if (s[1] == run.run()) {
          r.entries.add(new Entry(run, s[0], label(s[0], run, raw)));
        }
      }
    }
    r.entries.sort(Comparator.comparingInt((Entry e) -> order(e.path())));
    return r;
  }

  /** The path's name, and the run's commit and date where another run has the same series. */
  private static String label(JsonObject s, Run run, List<JsonObject[]> all) {
    long twins = all.stream().filter(o -> o[0].getString("sweep").equals(s.getString("sweep"))
      && o[0].getString("path").equals(s.getString("path")) && o[0].getString("variant").equals(s.getString("variant")))
      .count();
    String label = pathName(s.getString("path"));
    return twins > 1 ? label + " @" + run.commit() + " " + run.run().getString("date", "") : label;
  }

  static String pathName(String path) {
    for (String[] p : PATHS) {
      if (p[0].equals(path)) {
        return p[1];
      }
    }
    return path;
  }

  private static int order(String path) {
    for (int i = 0; i < PATHS.length; i++) {
      if (PATHS[i][0].equals(path)) {
        return i;
      }
    }
    return PATHS.length;
  }

  List<Entry> sweep(String sweep) {
    return entries.stream().filter(e -> e.sweep().equals(sweep)).toList();
  }

  /** The first series of {@code path} in {@code sweep} with {@code variant}. */
  Optional<Entry> find(String sweep, String path, String variant) {
    return entries.stream().filter(e -> e.sweep().equals(sweep) && e.path().equals(path)
      && e.variant().equals(variant)).findFirst();
  }

  /** The toolkit's paths present, in-process first. */
  List<String> toolkitPaths() {
    return entries.stream().map(Entry::path).filter(p -> p.equals("vertx.in_process") || p.equals("vertx.process"))
      .distinct().toList();
  }
}
