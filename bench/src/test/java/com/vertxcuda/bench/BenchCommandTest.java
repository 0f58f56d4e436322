package com.vertxcuda.bench;

import com.vertxcuda.bench.report.BenchReport;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The benchmark command as a user runs it without a GPU: {@code --backend host --mode in_process
 * --size small} finishes in seconds, writes JSON that passes the shipped JSON Schema and covers every
 * sweep it can measure here, and BenchReport turns it (with PyTorch's file) into HTML, Markdown and PNGs.
 * It runs beside the module's other test classes: its one bound (90 s for a run of about 30) leaves room
 * for their load.
 */
class BenchCommandTest {

  private static Path dir;
  private static JsonObject result;
  private static double seconds;

  @BeforeAll
  static void runTheBenchmark() throws Exception {
    dir = Files.createTempDirectory("bench-command");
    long t0 = System.nanoTime();
    result = BenchMain.run(BenchOptions.parse("--backend", "host", "--mode", "in_process", "--size", "small",
      "--out", dir.toString(), "--commit", "test"), "--size", "small");
    seconds = (System.nanoTime() - t0) / 1e9;
  }

  @Test
  void smallRunTakesSecondsAndItsJsonPassesTheSchema() throws Exception {
    assertTrue(seconds < 90, "the small run took " + seconds + " s");
    Path file = dir.resolve("bench-in_process.json");
    assertEquals(List.of(), BenchSchema.problems(file));
    assertEquals(0, BenchMain.failures(result), result.getJsonArray("skipped").encodePrettily());
    assertEquals("host", result.getJsonObject("run").getString("backend"));
    assertEquals("in_process", result.getJsonObject("run").getString("isolation"));
    // The callers' Vert.x is the quickstart's: a PollingTransport, on epoll where Netty's classes load.
    String base = io.vertx.core.transport.Transport.EPOLL != null && io.vertx.core.transport.Transport.EPOLL.available()
      ? "epoll" : "nio";
    assertEquals("polling " + base + " " + com.vertxcuda.device.PollingTransport.defaultPollMicros() + " us", result.getJsonObject("run").getString("transport"));
  }

  @Test
  void everySweepIsMeasuredOverItsSizes() {
    Set<String> sweeps = series().stream().map(s -> s.getString("sweep") + " " + s.getString("path"))
      .collect(Collectors.toSet());
    for (String sweep : List.of("roundtrip.fill", "roundtrip.payload", "concurrency.inflight", "concurrency.eventloops",
      "gemm.latency", "gemm.pipelined", "smallgemm.batch", "copy.h2d", "copy.d2h", "fft.c2c", "rng.uniform",
      "recovery", "graph.pipeline", "graph.spectral", "copy.large.h2d", "copy.large.d2h", "roundtrip.fill.tracing")) {
      assertTrue(sweeps.contains(sweep + " vertx.in_process"), sweep + " in " + sweeps);
    }
    assertTrue(sweeps.contains("roundtrip.fill vertx.tier"), "the hop below the device verticle: " + sweeps);
    assertEquals(List.of(4.0, 64.0, 1024.0, 16384.0, 262144.0), xs("roundtrip.payload", "transfer buffer"));
    assertEquals(List.of(64.0, 128.0, 256.0), xs("gemm.latency", "F16"));
    assertEquals(List.of(4096.0, 65536.0, 1048576.0), xs("copy.h2d", "heap"));
    assertEquals(List.of(1024.0, 16384.0), xs("graph.pipeline", "replay"));
    assertEquals(List.of(1024.0, 16384.0), xs("graph.spectral", "replay"));
    // The large copies at their one size, whatever the budget.
    assertEquals(List.of(16.0 * (1 << 20)), xs("copy.large.h2d", "heap"));
    assertEquals(List.of(16.0 * (1 << 20)), xs("copy.large.d2h", "float[]"));
    // Raw JCuda needs cuda: noted, not measured.
    assertTrue(result.getJsonArray("skipped").stream().map(JsonObject.class::cast)
      .anyMatch(s -> s.getString("path").equals("raw-jcuda")));
  }

  @Test
  void everyHostTypeIsMeasuredBothWaysAtTheSweepsSizes() {
    List<Double> sizes = List.of(65536.0, 1048576.0);
    for (String variant : List.of("direct Buffer", "float[]", "double[]", "int[]", "long[]", "short[]", "ByteBuffer heap",
      "ByteBuffer direct", "FloatBuffer heap", "FloatBuffer direct")) {
      assertPositiveAt("copy.host.h2d", variant, sizes);
    }
    for (String array : List.of("float[]", "double[]", "int[]", "long[]", "short[]")) {
      assertPositiveAt("copy.host.d2h", array + " kept", sizes);
      assertPositiveAt("copy.host.d2h", array + " new", sizes);
    }
    for (String variant : List.of("ByteBuffer direct", "FloatBuffer direct")) {
      assertPositiveAt("copy.host.d2h", variant, sizes);
    }
    // The heap Buffer, the transfer buffer and the lent buffer are copy.h2d's and copy.d2h's, at those sizes too.
    assertPositiveAt("copy.h2d", "heap", sizes);
    assertPositiveAt("copy.h2d", "transfer buffer", sizes);
    assertPositiveAt("copy.d2h", "lent buffer", sizes);
  }

  @Test
  void pointerArrayBatchedGemmsAreRepeatedRatesOfEachShape() {
    for (String[] shape : List.of(new String[] {"F32 16x16", "256"}, new String[] {"F32 64x64", "16"})) {
      JsonObject p = point("gemm.batched", "vertx.in_process", shape[0], Double.parseDouble(shape[1]));
      assertTrue(p.getDouble("value") > 0, p.encode());
      assertEquals(3, p.getJsonArray("repeats").size(), p.encode());
      // GEMMs per second: the members over a call's median time.
      double callMicros = p.getJsonObject("latency").getDouble("p50");
      double members = Double.parseDouble(shape[1]);
      assertTrue(p.getDouble("value") <= members / (p.getJsonObject("latency").getDouble("min") / 1e6) * 1.01
        && p.getDouble("value") >= members / (p.getJsonObject("latency").getDouble("max") / 1e6) * 0.99,
        p.encode() + ": " + members + " per call of p50 " + callMicros + " us");
    }
  }

  private static void assertPositiveAt(String sweep, String variant, List<Double> sizes) {
    for (double x : sizes) {
      JsonObject p = point(sweep, "vertx.in_process", variant, x);
      assertTrue(p.getDouble("value") > 0 && p.getLong("runs") >= 3, sweep + " " + variant + ": " + p.encode());
    }
  }

  @Test
  void latenciesComeWithTheirRunCountsAndOrderedPercentiles() {
    JsonObject fill = point("roundtrip.fill", "vertx.in_process", 1024);
    assertEquals(3 * 500, fill.getInteger("runs"), "the timed round trips of the three repeats, warm-up excluded");
    assertEquals(3 * 50, fill.getInteger("warmup"));
    for (JsonObject s : series()) {
      for (Object o : s.getJsonArray("points")) {
        JsonObject p = (JsonObject) o;
        assertTrue(p.getLong("runs") >= 1, s.encode());
        JsonObject l = p.getJsonObject("latency");
        if (l != null) {
          assertTrue(l.getDouble("min") <= l.getDouble("p50") && l.getDouble("p50") <= l.getDouble("p99")
            && l.getDouble("p99") <= l.getDouble("p999") && l.getDouble("p999") <= l.getDouble("max"), l.encode());
        }
      }
    }
    JsonObject rate = point("concurrency.inflight", "vertx.in_process", 16);
    assertTrue(rate.getJsonObject("extra").getDouble("rate") > 0);
    JsonObject poison = point("recovery", "vertx.in_process", 1);
    assertEquals("poison", poison.getString("label"));
  }

  @Test
  void theLibraryCallsAreMeasuredHopByHop() {
    // The headline sizes of the small plan: the largest FFT, RNG count and GEMM.
    Map<String, Double> sizes = Map.of("hops.fft", 4096.0, "hops.rng", 262144.0, "hops.gemm", 256.0);
    for (Map.Entry<String, Double> op : sizes.entrySet()) {
      for (String path : List.of("vertx.tier", "vertx.in_process")) {
        JsonObject p = point(op.getKey(), path, op.getValue());
        JsonObject l = p.getJsonObject("latency");
        assertTrue(l.getDouble("p50") > 0 && l.getDouble("p50") <= l.getDouble("p99"), op + " " + path + " " + l);
        assertTrue(p.getLong("runs") >= 5, op + " " + path + ": " + p.getLong("runs") + " runs");
      }
      // Raw JCuda and the call on the context's own stream need cuda: noted, not measured.
      for (String path : List.of("raw-jcuda", "context")) {
        assertTrue(result.getJsonArray("skipped").stream().map(JsonObject.class::cast).anyMatch(s -> s.getString("path")
          .equals(path) && (s.getString("sweep").equals(op.getKey()) || s.getString("sweep").equals("all"))),
          op.getKey() + " " + path + " not noted as skipped");
      }
    }
    // The fill's hops, each with its p50 no higher than its p99.
    for (String path : List.of("context", "vertx.tier", "vertx.in_process")) {
      JsonObject l = point("roundtrip.fill", path, 1024).getJsonObject("latency");
      assertTrue(l.getDouble("p50") <= l.getDouble("p99"), path + " " + l);
    }
  }

  @Test
  void headlinePointsAreRepeatedAndTheirValueIsTheMedian() {
    String t = "vertx.in_process";
    List<String[]> headlines = List.of(new String[] {"roundtrip.fill", t, "fill", "1024"},
      new String[] {"roundtrip.fill", "vertx.tier", "fill", "1024"},
      new String[] {"roundtrip.fill", "context", "fill + completion", "1024"},
      new String[] {"fft.c2c", t, "C2C forward, in place", "4096"}, new String[] {"rng.uniform", t, "Philox, F32", "262144"},
      new String[] {"gemm.latency", t, "FP32", "256"}, new String[] {"gemm.latency", t, "TF32", "256"},
      new String[] {"gemm.latency", t, "F16", "256"}, new String[] {"copy.h2d", t, "transfer buffer", "1048576"},
      new String[] {"copy.h2d", t, "heap", "1048576"}, new String[] {"copy.d2h", t, "lent buffer", "1048576"},
      new String[] {"smallgemm.batch", t, "1 event loop", "1"}, new String[] {"smallgemm.batch", t, "strided batched", "64"},
      new String[] {"copy.large.d2h", t, "lent buffer", "16777216"}, new String[] {"copy.large.h2d", t, "heap", "16777216"},
      new String[] {"copy.large.d2h", t, "float[]", "16777216"});
    for (String[] h : headlines) {
      JsonObject p = point(h[0], h[1], h[2], Double.parseDouble(h[3]));
      List<Double> repeats = p.getJsonArray("repeats").stream().map(v -> ((Number) v).doubleValue()).sorted().toList();
      assertTrue(repeats.size() >= 3, String.join(" ", h) + ": " + repeats);
      double value = p.getDouble("value");
      assertEquals(repeats.get(repeats.size() / 2), value, 1e-9, "the median of " + repeats);
      assertTrue(repeats.get(0) <= value && value <= repeats.get(repeats.size() - 1), repeats + " " + value);
      assertTrue(repeats.get(0) > 0, String.join(" ", h) + ": " + repeats);
    }
    // Points that are not headlines are measured once.
    assertNull(point("gemm.latency", t, "FP32", 64).getValue("repeats"));
    assertNull(point("fft.c2c", t, "C2C forward, in place", 256).getValue("repeats"));
  }

  @Test
  void reportMakesHtmlMarkdownAndLegiblePngs() throws Exception {
    Path out = dir.resolve("report");
    List<Path> written = BenchReport.write(List.of(dir.resolve("bench-in_process.json")), out);
    assertTrue(written.contains(out.resolve("report.html")) && written.contains(out.resolve("report.md")));
    String html = Files.readString(out.resolve("report.html"), StandardCharsets.UTF_8);
    assertTrue(html.contains("<svg"), "charts inline");
    assertFalse(html.contains("<script") || html.contains("src=\"http") || html.contains("href=\"http"),
      "self-contained: no script, nothing fetched");
    assertTrue(html.contains("1 KiB fill round trip"));
    String md = Files.readString(out.resolve("report.md"), StandardCharsets.UTF_8);
    assertTrue(md.contains("| 1 KiB fill round trip, p50 |"), md);
    // Which loops the callers ran on is in the runs table: the figures depend on it.
    assertTrue(md.contains("callers' transport") && md.contains("| polling "), md);
    // The headline shows the repeats' spread; the hop tables of every op follow.
    assertTrue(md.lines().anyMatch(l -> l.startsWith("| FFT C2C 4096 |") && l.contains(" \u2013 ")), md);
    assertTrue(md.contains("## Where the time goes"), md);
    for (String op : List.of("| 1 KiB fill |", "| FFT C2C 4096 |", "| uniform RNG 2^18 |", "| GEMM TF32 256 |")) {
      assertTrue(md.lines().filter(l -> l.startsWith(op)).count() >= 2, op + " hop by hop in\n" + md);
    }
    // The copies by host type, a table per direction with a row per host type, a column per size.
    assertTrue(md.contains("## Uploads (host to device) by host type") && md.contains("## Downloads (device to host) by "
      + "host type"), md);
    assertTrue(md.contains("| host type | judged by | 64 KiB in-process | 1 MiB in-process |"), md);
    for (String row : List.of("| heap Buffer | PyTorch pageable | ", "| direct Buffer | PyTorch pageable | ",
      "| short[] | PyTorch pageable | ", "| FloatBuffer direct | PyTorch pageable | ", "| float[] kept | PyTorch pageable | ",
      "| long[] new | PyTorch .cpu() | ", "| Buffer (download, lent buffer handed back) | PyTorch .cpu() | ")) {
      assertTrue(md.lines().anyMatch(l -> l.startsWith(row) && l.contains(" GB/s |")), row + " in\n" + md);
    }
    // The batched GEMMs, each shape with the toolkit's rate and its spread.
    assertTrue(md.contains("## Pointer-array batched GEMM"), md);
    assertTrue(md.lines().anyMatch(l -> l.startsWith("| F32 64x64, 16 per call |  | ") && l.contains("/s (")), md);
    for (String chart : List.of("latency-cdf", "payload-latency", "concurrency-latency", "gemm-fp32", "smallgemm",
      "copy-h2d", "fft", "rng", "recovery", "hops", "graph")) {
      BufferedImage png = ImageIO.read(out.resolve(chart + ".png").toFile());
      assertEquals(960, png.getWidth(), chart);
      long inked = 0;
      for (int y = 0; y < png.getHeight(); y += 2) {
        for (int x = 0; x < png.getWidth(); x += 2) {
          inked += (png.getRGB(x, y) & 0xFFFFFF) != 0xFFFFFF ? 1 : 0;
        }
      }
      assertTrue(inked > 2_000, chart + " has " + inked + " drawn pixels");
    }
  }

  @Test
  void pytorchScriptWritesTheSameSchemaWhereTorchCannotRun() throws Exception {
    assumeTrue(new File("pytorch_bench.py").isFile(), "run from the bench module");
    Process p;
    try {
      p = new ProcessBuilder("python3", "pytorch_bench.py", "--out", dir.resolve("torch").toString(),
        "--size", "small", "--commit", "test").redirectErrorStream(true).start();
    } catch (java.io.IOException e) {
      assumeTrue(false, "no python3 here");
      return;
    }
    assertTrue(p.waitFor(120, TimeUnit.SECONDS));
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.exitValue(), output);
    Path file = dir.resolve("torch").resolve("pytorch.json");
    assertEquals(List.of(), BenchSchema.problems(file));
    BenchReport.write(List.of(dir.resolve("bench-in_process.json"), file), dir.resolve("both"));
    String md = Files.readString(dir.resolve("both").resolve("report.md"), StandardCharsets.UTF_8);
    assertTrue(md.contains("| pytorch.json | pytorch_bench.py | test |"), md);
  }

  private static List<JsonObject> series() {
    return result.getJsonArray("series").stream().map(JsonObject.class::cast).toList();
  }

  private static List<Double> xs(String sweep, String variant) {
    return series().stream().filter(s -> s.getString("sweep").equals(sweep) && s.getString("variant").equals(variant))
      .findFirst().orElseThrow().getJsonArray("points").stream().map(p -> ((JsonObject) p).getDouble("x")).toList();
  }

  /** The point at {@code x} of {@code path}'s series of {@code sweep} with {@code variant}. */
  private static JsonObject point(String sweep, String path, String variant, double x) {
    return series().stream().filter(s -> s.getString("sweep").equals(sweep) && s.getString("path").equals(path)
        && s.getString("variant").equals(variant))
      .flatMap(s -> s.getJsonArray("points").stream().map(JsonObject.class::cast))
      .filter(p -> p.getDouble("x") == x).findFirst()
      .orElseThrow(() -> new AssertionError(sweep + " " + path + " " + variant + " " + x));
  }

  private static JsonObject point(String sweep, String path, double x) {
    return series().stream().filter(s -> s.getString("sweep").equals(sweep) && s.getString("path").equals(path))
      .flatMap(s -> s.getJsonArray("points").stream().map(JsonObject.class::cast))
      .filter(p -> p.getDouble("x") == x).findFirst().orElseThrow(() -> new AssertionError(sweep + " " + path + " " + x));
  }
}
