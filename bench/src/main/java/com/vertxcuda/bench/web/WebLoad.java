package com.vertxcuda.bench.web;

import com.vertxcuda.DeviceClient;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.samples.web.GemmServer;
import com.vertxcuda.samples.web.GemmServerOptions;
import com.vertxcuda.samples.web.LoadBodies;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The web sample under load: {@link GemmServer} deployed one instance per event loop with its echo
 * endpoint (the same requests and checks, answered with A's bytes and no GPU work: the HTTP
 * ceiling), and a closed-loop HTTP client ({@link LoadClient}) in the same JVM on a Vert.x of its
 * own. For each n, the echo endpoint and then the GEMM endpoint: requests per second, p50/p99,
 * errors and wrong answers (every answer checked). Writes {@code web-load.json} and
 * {@code web-load.md} (a table with the GEMM endpoint's rate over the echo's) into the output folder;
 * exits 0 when every point ran with no error and no wrong answer.
 *
 * <pre>java -cp ... com.vertxcuda.bench.web.WebLoad [--backend auto|host|cuda] [--mode in_process|process]
 *     [--sizes 64,256,1024] [--connections 64] [--warmup 3] [--seconds 8] [--budget 100] [--out DIR] [--commit ID]
 *     [--keep-buffers true|false]</pre>
 */
public final class WebLoad {

  /** The command line. */
  record Settings(BackendKind backend, Isolation mode, List<Integer> sizes, int connections, double warmup,
                  double seconds, double budget, Path out, String commit, boolean keepBuffers) {

    static Settings parse(String... args) {
      BackendKind backend = BackendKind.AUTO;
      Isolation mode = Isolation.PROCESS;
      List<Integer> sizes = List.of(64, 256, 1024);
      int connections = 64;
      double warmup = 3;
      double seconds = 8;
      double budget = 100;
      Path out = Path.of("web-load-out");
      String commit = "unknown";
      boolean keepBuffers = GemmServerOptions.DEFAULT_KEEP_BUFFERS;
      for (int i = 0; i < args.length; i += 2) {
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException(args[i] + " needs a value\n" + USAGE);
        }
        String v = args[i + 1];
        switch (args[i]) {
          case "--backend" -> backend = BackendKind.valueOf(v.toUpperCase(Locale.ROOT));
          case "--mode" -> mode = Isolation.valueOf(v.toUpperCase(Locale.ROOT));
          case "--sizes" -> sizes = Arrays.stream(v.split(",")).map(Integer::valueOf).toList();
          case "--connections" -> connections = Integer.parseInt(v);
          case "--warmup" -> warmup = Double.parseDouble(v);
          case "--seconds" -> seconds = Double.parseDouble(v);
          case "--budget" -> budget = Double.parseDouble(v);
          case "--out" -> out = Path.of(v);
          case "--commit" -> commit = v;
          case "--keep-buffers" -> keepBuffers = Boolean.parseBoolean(v);
          default -> throw new IllegalArgumentException("unknown option " + args[i] + "\n" + USAGE);
        }
      }
      return new Settings(backend, mode, sizes, connections, warmup, seconds, budget, out, commit, keepBuffers);
    }
  }

  static final String USAGE = "usage: WebLoad [--backend auto|host|cuda] [--mode in_process|process] [--sizes 64,256,1024]\n"
    + "               [--connections 64] [--warmup S] [--seconds S] [--budget S] [--out DIR] [--commit ID]\n"
    + "               [--keep-buffers true|false]   (false: the server allocates and frees device buffers per request)";
  private static final String[] ENDPOINTS = {"echo", "gemm"};

  private WebLoad() {
  }

  public static void main(String[] args) throws Exception {
    Settings settings;
    try {
      settings = Settings.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    JsonObject result = run(settings);
    System.exit(passed(result) ? 0 : 1);
  }

  /** Every planned point ran, with no error and no wrong answer. */
  static boolean passed(JsonObject result) {
    return result.getJsonArray("skipped").isEmpty() && result.getJsonArray("points").stream()
      .map(JsonObject.class::cast).allMatch(p -> p.getLong("errors") == 0 && p.getLong("wrongAnswers") == 0);
  }

  static JsonObject run(Settings s) throws Exception {
    long start = System.nanoTime();
    long deadline = start + (long) (s.budget() * 1e9);
    VertxOptions serverOptions = new VertxOptions();
    int eventLoops = serverOptions.getEventLoopPoolSize();
    Vertx server = Vertx.vertx(serverOptions);
    Vertx client = Vertx.vertx();
    JsonArray points = new JsonArray();
    JsonArray skipped = new JsonArray();
    JsonObject result = new JsonObject().put("tool", "WebLoad").put("commit", s.commit())
      .put("date", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString())
      .put("host", new JsonObject().put("cores", Runtime.getRuntime().availableProcessors())
        .put("java", System.getProperty("java.version")))
      .put("eventLoops", eventLoops).put("instances", eventLoops).put("connections", s.connections())
      .put("keepBuffers", s.keepBuffers()).put("warmupSeconds", s.warmup()).put("seconds", s.seconds())
      .put("points", points).put("skipped", skipped);
    try {
      DeviceVerticle device = new DeviceVerticle(new DeviceOptions().setBackend(s.backend()).setIsolation(s.mode())
        .setHostMemory(3L << 30).setSharedMemorySize(2047L << 20));
      get(server.deployVerticle(device));
      DeviceInfo info = get(DeviceClient.create(server).describe());
      result.put("backend", info.getBackend()).put("isolation", info.getIsolation().toLowerCase(Locale.ROOT))
        .put("device", info.getName());
      int maxN = s.sizes().stream().mapToInt(Integer::intValue).max().orElse(1);
      // A closed loop of C connections never has more than C requests out: the server's own bound
      // stays out of the way, so any refusal is the device's and counts as an error.
      GemmServerOptions options = new GemmServerOptions().setPort(-1).setEcho(true).setMaxN(maxN).setKeepBuffers(s.keepBuffers())
        .setMaxInFlight(Math.max(GemmServerOptions.DEFAULT_MAX_IN_FLIGHT, s.connections()));
      int port = get(GemmServer.deploy(server, options, device, eventLoops)).get(0).actualPort();
      progress(start, "%s backend (%s, %s), %d server instances (one per event loop), port %d, %d connections",
        info.getBackend(), info.getName(), info.getIsolation(), eventLoops, port, s.connections());
      try (LoadClient load = new LoadClient(client, s.connections())) {
        int planned = s.sizes().size() * ENDPOINTS.length;
        int done = 0;
        for (int n : s.sizes()) {
          LoadBodies bodies = new LoadBodies(n, 2, n);
          for (String endpoint : ENDPOINTS) {
            double left = (deadline - System.nanoTime()) / 1e9;
            // The time left is shared by the points still to run, with a second each for draining.
            double share = left / (planned - done) - 1;
            double scale = Math.min(1, share / (s.warmup() + s.seconds()));
            if (scale < 0.2) {
              skipped.add(new JsonObject().put("endpoint", endpoint).put("n", n)
                .put("reason", String.format(Locale.ROOT, "time budget (%.0f s) spent", s.budget())));
              progress(start, "%s n=%d: budget spent, skipped", endpoint, n);
              done++;
              continue;
            }
            LoadClient.Result r = get(load.run(port, endpoint, n, bodies.bodies,
              endpoint.equals("echo") ? bodies.echoes : bodies.products,
              (long) (s.warmup() * scale * 1e9), (long) (s.seconds() * scale * 1e9)));
            points.add(r.toJson());
            progress(start, "%-4s n=%4d: %,10.0f req/s  p50 %8.2f ms  p99 %8.2f ms  (%d answered, %d errors, %d wrong)%s",
              endpoint, n, r.rate(), r.latency().getValueAtPercentile(50) / 1e6,
              r.latency().getValueAtPercentile(99) / 1e6, r.answered(), r.errors(), r.wrong(),
              r.firstError() == null ? "" : "  first: " + r.firstError());
            done++;
          }
        }
      }
    } catch (Exception e) {
      skipped.add(new JsonObject().put("endpoint", "all").put("reason", "failed: " + e));
      progress(start, "failed: %s", e);
      e.printStackTrace(System.out);
    } finally {
      client.close().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
      server.close().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
    result.put("wallSeconds", LoadClient.round((System.nanoTime() - start) / 1e9));
    result.put("ratios", ratios(points));
    write(s.out(), result);
    progress(start, "wrote %s: %s", s.out().resolve("web-load.json"), passed(result) ? "all OK" : "NOT all OK");
    return result;
  }

  /** For each n with both points: the GEMM endpoint's rate over the echo's. */
  private static JsonArray ratios(JsonArray points) {
    JsonArray ratios = new JsonArray();
    for (Object o : points) {
      JsonObject gemm = (JsonObject) o;
      if (!gemm.getString("endpoint").equals("gemm")) {
        continue;
      }
      points.stream().map(JsonObject.class::cast)
        .filter(p -> p.getString("endpoint").equals("echo") && p.getInteger("n").equals(gemm.getInteger("n"))
          && p.getDouble("requestsPerSecond") > 0)
        .findFirst().ifPresent(echo -> ratios.add(new JsonObject().put("n", gemm.getInteger("n"))
          .put("gemmOverEcho", LoadClient.round(gemm.getDouble("requestsPerSecond") / echo.getDouble("requestsPerSecond")))));
    }
    return ratios;
  }

  static void write(Path out, JsonObject result) throws IOException {
    Files.createDirectories(out);
    Files.writeString(out.resolve("web-load.json"), result.encodePrettily() + "\n", StandardCharsets.UTF_8);
    Files.writeString(out.resolve("web-load.md"), markdown(result), StandardCharsets.UTF_8);
  }

  /** The table: per n, both endpoints' rates and latencies, the ratio, and the answers checked. */
  static String markdown(JsonObject r) {
    StringBuilder md = new StringBuilder();
    md.append(String.format(Locale.ROOT, "### Web sample under load (%s backend, %s, %s; commit %s, %s)%n%n",
      r.getString("backend", "?"), r.getString("isolation", "?"), r.getString("device", "?"), r.getString("commit"),
      r.getString("date")));
    md.append(String.format(Locale.ROOT, "GemmServer and its echo endpoint, %d instances (one per event loop), device buffers %s;"
        + " a closed-loop client in the same JVM, %d connections, octet-stream bodies prebuilt; %.0f s warm-up and %.0f s"
        + " measured per point; every answer checked byte for byte.%n%n", r.getInteger("instances"),
      r.getBoolean("keepBuffers") ? "kept between requests" : "allocated and freed per request", r.getInteger("connections"),
      r.getDouble("warmupSeconds"), r.getDouble("seconds")));
    md.append("| n | echo req/s | GEMM req/s | GEMM / echo | echo p50 / p99 ms | GEMM p50 / p99 ms | answers checked | errors | wrong |\n");
    md.append("|---|---|---|---|---|---|---|---|---|\n");
    JsonArray points = r.getJsonArray("points");
    List<Integer> sizes = new ArrayList<>();
    points.stream().map(JsonObject.class::cast).map(p -> p.getInteger("n")).distinct().forEach(sizes::add);
    for (int n : sizes) {
      JsonObject echo = find(points, "echo", n);
      JsonObject gemm = find(points, "gemm", n);
      long answered = count(echo, "answered") + count(gemm, "answered");
      long errors = count(echo, "errors") + count(gemm, "errors");
      long wrong = count(echo, "wrongAnswers") + count(gemm, "wrongAnswers");
      String ratio = echo != null && gemm != null && echo.getDouble("requestsPerSecond") > 0 ? String.format(Locale.ROOT, "%.2f",
        gemm.getDouble("requestsPerSecond") / echo.getDouble("requestsPerSecond")) : "–";
      md.append(String.format(Locale.ROOT, "| %d | %s | %s | %s | %s | %s | %,d | %d | %d |%n", n, rate(echo), rate(gemm),
        ratio, latency(echo), latency(gemm), answered, errors, wrong));
    }
    for (Object o : r.getJsonArray("skipped")) {
      JsonObject s = (JsonObject) o;
      md.append(String.format(Locale.ROOT, "%nnot measured: %s n=%s: %s", s.getString("endpoint"), s.getValue("n", "all"),
        s.getString("reason")));
    }
    return md.append('\n').toString();
  }

  private static JsonObject find(JsonArray points, String endpoint, int n) {
    return points.stream().map(JsonObject.class::cast)
      .filter(p -> p.getString("endpoint").equals(endpoint) && p.getInteger("n") == n).findFirst().orElse(null);
  }

  private static long count(JsonObject p, String key) {
    return p == null ? 0 : p.getLong(key);
  }

  private static String rate(JsonObject p) {
    return p == null ? "–" : String.format(Locale.ROOT, "%,.0f", p.getDouble("requestsPerSecond"));
  }

  private static String latency(JsonObject p) {
    if (p == null) {
      return "–";
    }
    JsonObject l = p.getJsonObject("latencyMs");
    return String.format(Locale.ROOT, "%.2f / %.2f", l.getDouble("p50"), l.getDouble("p99"));
  }

  private static void progress(long start, String format, Object... args) {
    System.out.printf(Locale.ROOT, "[web %6.1f s] %s%n", (System.nanoTime() - start) / 1e9,
      String.format(Locale.ROOT, format, args));
  }

  private static <T> T get(Future<T> f) throws Exception {
    try {
      return f.toCompletionStage().toCompletableFuture().get(10, TimeUnit.MINUTES);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
    }
  }
}
