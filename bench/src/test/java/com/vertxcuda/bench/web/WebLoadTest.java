package com.vertxcuda.bench.web;

import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.samples.web.GemmServer;
import com.vertxcuda.samples.web.GemmServerOptions;
import com.vertxcuda.samples.web.LoadBodies;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The load test on the host backend: a short run has no error and no wrong answer, and its check can fail. */
class WebLoadTest {

  @Test
  void aShortRunAnswersEveryRequestRightAndWritesItsTable(@TempDir Path out) throws Exception {
    JsonObject result = WebLoad.run(WebLoad.Settings.parse("--backend", "host", "--mode", "in_process",
      "--sizes", "8,48", "--connections", "4", "--warmup", "0.3", "--seconds", "1", "--budget", "30",
      "--out", out.toString()));
    assertTrue(WebLoad.passed(result), result.encodePrettily());
    assertEquals(4, result.getJsonArray("points").size());
    for (Object o : result.getJsonArray("points")) {
      JsonObject p = (JsonObject) o;
      assertTrue(p.getLong("measured") > 0, p.encode());
      assertTrue(p.getDouble("requestsPerSecond") > 0, p.encode());
    }
    assertEquals(2, result.getJsonArray("ratios").size());
    String table = Files.readString(out.resolve("web-load.md"));
    assertTrue(table.contains("| 48 |"), table);
    assertTrue(Files.exists(out.resolve("web-load.json")));
  }

  @Test
  void aWrongAnswerIsCounted() throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      DeviceVerticle device = new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.HOST)
        .setIsolation(Isolation.IN_PROCESS));
      get(vertx.deployVerticle(device));
      int port = get(GemmServer.deploy(vertx, new GemmServerOptions().setPort(-1).setEcho(true), device, 1)).get(0)
        .actualPort();
      LoadBodies bodies = new LoadBodies(8, 2, 3);
      try (LoadClient client = new LoadClient(vertx, 2)) {
        // The echo endpoint answers A, not A B: every answer is wrong, and no request is an error.
        LoadClient.Result r = get(client.run(port, "echo", 8, bodies.bodies, bodies.products, 0, 300_000_000L));
        assertTrue(r.answered() > 0);
        assertEquals(r.answered(), r.wrong());
        assertEquals(0, r.errors());
        // A missing endpoint is an error on every request.
        LoadClient.Result missing = get(client.run(port, "nothing", 8, bodies.bodies, bodies.products, 0, 100_000_000L));
        assertEquals(missing.answered(), missing.errors());
        assertEquals(List.of("HTTP 404"), List.copyOf(missing.errorKinds().keySet()));
      }
    } finally {
      get(vertx.close());
    }
  }

  @Test
  void buffersAllocatedPerRequestAreFreedPerRequest() throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      DeviceVerticle device = new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.HOST)
        .setIsolation(Isolation.IN_PROCESS));
      get(vertx.deployVerticle(device));
      int port = get(GemmServer.deploy(vertx, new GemmServerOptions().setPort(-1).setKeepBuffers(false), device, 2))
        .get(0).actualPort();
      LoadBodies bodies = new LoadBodies(8, 2, 9);
      try (LoadClient client = new LoadClient(vertx, 3)) {
        LoadClient.Result r = get(client.run(port, "gemm", 8, bodies.bodies, bodies.products, 0, 300_000_000L));
        assertTrue(r.answered() > 0);
        assertEquals(0, r.errors(), r.firstError());
        assertEquals(0, r.wrong());
      }
      // Every request has been answered and the servers still run: once the frees sent with the last
      // answers are done (stats are answered ahead of queued work), they hold no device buffer.
      com.vertxcuda.DeviceClient stats = com.vertxcuda.DeviceClient.create(vertx);
      long held = get(stats.stats()).getBuffersAllocated();
      for (long deadline = System.nanoTime() + 5_000_000_000L; held > 0 && System.nanoTime() < deadline; ) {
        Thread.sleep(20);
        held = get(stats.stats()).getBuffersAllocated();
      }
      assertEquals(0, held);
    } finally {
      get(vertx.close());
    }
  }

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }
}
