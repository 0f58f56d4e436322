package com.vertxcuda.observability;

import com.vertxcuda.DeviceClient;
import com.vertxcuda.GpuReadings;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.observability.impl.DeviceHealthProcedure;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.HealthChecks;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The GPU's NVML meters where there are none (the host backend, no NVIDIA driver): no
 * {@code vertxcuda_gpu_*} meter, no readings in the stats, the device UP; and the health data the
 * readings give where there are some.
 */
@ExtendWith(VertxExtension.class)
class GpuMetersTest {

  @Test
  void theHostBackendHasNoGpuMetersAndStaysUp(Vertx vertx, VertxTestContext test) {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    // Read every 10 ms: had the device any readings, the poll below would find them.
    DeviceOptions options = new DeviceOptions().setBackend(BackendKind.HOST).setLibraries(List.of())
      .setSpareDeviceHost(false).setGpuMetersInterval(10);
    HealthChecks checks = HealthChecks.create(vertx);
    vertx.deployVerticle(new DeviceVerticle(options)).compose(id -> {
      DeviceClient client = DeviceClient.create(vertx);
      DeviceHealth health = DeviceHealth.register(checks, client);
      DeviceMetrics metrics = DeviceMetrics.create(vertx, registry, new DeviceMetricsOptions().setPollInterval(60_000));
      return client.describe().compose(info -> client.stats().compose(stats -> metrics.poll()
        .compose(x -> checks.checkStatus(health.name()))
        .map(status -> {
          test.verify(() -> {
            assertEquals("", info.getPciBusId(), "the host backend has no PCI bus id");
            assertNull(stats.getGpu(), "no GPU readings: " + stats.toJson().encode());
            String scrape = registry.scrape();
            assertTrue(scrape.contains("vertxcuda_device_ready"), scrape);
            assertFalse(scrape.contains("vertxcuda_gpu_"), scrape);
            assertTrue(registry.find("vertxcuda.gpu.utilization").meters().isEmpty());
            assertTrue(status.getUp(), status.toJson().encode());
            assertEquals("READY", status.getData().getString("state"));
            assertFalse(status.getData().containsKey("health"), status.toJson().encode());
          });
          metrics.close();
          health.unregister();
          return status;
        })));
    }).onComplete(test.succeeding(x -> {
      registry.close();
      test.completeNow();
    }));
  }

  @Test
  void anXidOrUncorrectedEccErrorMarksTheDeviceDegraded() {
    GpuReadings clean = new GpuReadings().setUtilizationPercent(40).setEccCorrectedErrors(3).setEccUncorrectedErrors(0);
    JsonObject healthy = DeviceHealthProcedure.gpu(new JsonObject().put("state", "READY"), clean);
    assertEquals("HEALTHY", healthy.getString("health"), "corrected ECC errors alone are not a fault");
    assertFalse(healthy.containsKey("reason"));

    JsonObject xid = DeviceHealthProcedure.gpu(new JsonObject(), new GpuReadings(clean).setXidErrors(2).setLastXid(79));
    assertEquals("DEGRADED", xid.getString("health"));
    assertEquals(79, xid.getLong("lastXid"));
    assertEquals(2, xid.getLong("xidErrors"));
    assertTrue(xid.getString("reason").contains("XID 79"), xid.encode());

    JsonObject ecc = DeviceHealthProcedure.gpu(new JsonObject(), new GpuReadings(clean).setEccUncorrectedErrors(1));
    assertEquals("DEGRADED", ecc.getString("health"));
    assertEquals(1, ecc.getLong("eccUncorrectedErrors"));

    JsonObject none = DeviceHealthProcedure.gpu(new JsonObject().put("state", "READY"), null);
    assertEquals(new JsonObject().put("state", "READY"), none, "no readings, no health data");
  }
}
