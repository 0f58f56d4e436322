package com.vertxcuda.samples.cluster;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code GpuNode --prometheus-port}: a node's own JVM, scraped and probed over HTTP. */
class GpuNodeMetricsTest {

  @Test
  void theNodeServesMetricsAndHealth() throws Exception {
    ClusterSettings settings = new ClusterSettings();
    settings.name = "vertx-cuda-metrics-" + ProcessHandle.current().pid();
    List<String> args = new ArrayList<>(settings.arguments());
    args.addAll(List.of("--backend", "host", "--prometheus-port", "0"));
    Vertx vertx = Vertx.vertx();
    try (NodeProcess node = NodeProcess.start(GpuNode.class, args, "metrics and health on HTTP port ")) {
      int port = Integer.parseInt(node.ready(120).split(":")[0]);
      WebClient web = WebClient.create(vertx);
      HttpResponse<Buffer> health = await(web.get(port, "127.0.0.1", "/health").send());
      assertEquals(200, health.statusCode(), health.bodyAsString());
      assertEquals("UP", health.bodyAsJsonObject().getString("outcome"), health.bodyAsString());
      // The health check's describe went through the device: its latency is on the timer.
      String metrics = await(web.get(port, "127.0.0.1", "/metrics").send()).bodyAsString();
      assertTrue(metrics.matches("(?s).*vertxcuda_device_request_seconds_count\\{[^}]*code=\"OK\"[^}]*} [1-9].*"), metrics);
      // Vert.x's own meters share the registry: the /health request above, the device's event-bus handlers.
      assertTrue(metrics.matches("(?s).*vertx_http_server_requests_total\\{[^}]*} [1-9].*"), metrics);
      assertTrue(metrics.matches("(?s).*vertx_eventbus_handlers(\\{[^}]*})? [1-9].*"), metrics);
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }
}
