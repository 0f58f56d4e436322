package com.vertxcuda.observability;

import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Closing the metrics while a poll is on its way leaves no meter and no event consumer behind. */
class MetricsCloseTest {

  @Test
  void closeWhileAPollIsOnItsWayLeavesNoMeters() throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      vertx.deployVerticle(new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.HOST).setLibraries(List.of())))
        .toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
      Thread.sleep(500);
      PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
      DeviceMetrics metrics = DeviceMetrics.create(vertx, registry, new DeviceMetricsOptions().setPollInterval(60_000));
      metrics.poll();
      metrics.close();
      Thread.sleep(1_000);
      long left = registry.getMeters().stream().filter(m -> m.getId().getName().startsWith("vertxcuda.device")).count();
      assertEquals(0, left);
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
  }
}
