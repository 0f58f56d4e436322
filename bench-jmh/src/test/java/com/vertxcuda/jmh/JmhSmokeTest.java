package com.vertxcuda.jmh;

import com.vertxcuda.bench.BenchSchema;
import com.vertxcuda.bench.report.BenchReport;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every microbenchmark runs (for a fraction of a second) and its result lands in the benchmark schema and report. */
class JmhSmokeTest {

  @Test
  void everyBenchmarkRunsAndReportsInTheSchema(@TempDir Path dir) throws Exception {
    Path file = JmhMain.run(true, "com.vertxcuda.jmh|com.vertxcuda.device.isolation", dir, "test");
    assertEquals(List.of(), BenchSchema.problems(file));
    JsonObject json = new JsonObject(Files.readString(file, StandardCharsets.UTF_8));
    Set<String> labels = json.getJsonArray("series").stream().map(JsonObject.class::cast)
      .flatMap(s -> s.getJsonArray("points").stream().map(JsonObject.class::cast)
        .peek(p -> assertTrue(p.getDouble("value") > 0 && p.getLong("runs") > 0, p.encode()))
        .map(p -> s.getString("sweep") + " " + p.getString("label")))
      .collect(Collectors.toSet());
    for (String expected : List.of("jmh.codec encode message=FillRequest", "jmh.codec decode message=BlasRequest",
      "jmh.linkframe encodeRequest", "jmh.linkframe decodeRequest", "jmh.registry leastLoaded devices=16",
      "jmh.submissionqueue oneByOne spinMicros=50", "jmh.submissionqueue burst spinMicros=0")) {
      assertTrue(labels.contains(expected), expected + " in " + labels);
    }
    BenchReport.write(List.of(file), dir.resolve("report"));
    assertTrue(Files.size(dir.resolve("report").resolve("jmh.png")) > 1000);
  }
}
