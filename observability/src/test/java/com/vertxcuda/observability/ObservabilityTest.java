package com.vertxcuda.observability;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.message.FaultRequest;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.CheckResult;
import io.vertx.ext.healthchecks.HealthChecks;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The meters a scraper reads over HTTP, and a device's health through a poison and its rebuild. */
@ExtendWith(VertxExtension.class)
class ObservabilityTest {

  private PrometheusMeterRegistry registry;
  private DeviceClient client;

  @BeforeEach
  void deploy(Vertx vertx, VertxTestContext test) {
    registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    // A slow context open keeps the device REBUILDING long enough to be seen DOWN.
    DeviceOptions options = new DeviceOptions().setBackend(BackendKind.HOST).setFaultInjection(true).setOpenDelay(400)
      .setLibraries(List.of()).setSpareDeviceHost(false);
    vertx.deployVerticle(new DeviceVerticle(options).setRequestListener(DeviceRequestTimer.create(registry)))
      .onComplete(test.succeeding(id -> {
        client = DeviceClient.create(vertx);
        test.completeNow();
      }));
  }

  @AfterEach
  void close() {
    registry.close();
  }

  @Test
  void prometheusEndpointServesTheDeviceMeters(Vertx vertx, VertxTestContext test) {
    DeviceMetrics metrics = DeviceMetrics.create(vertx, registry, new DeviceMetricsOptions().setPollInterval(60_000));
    WebClient web = WebClient.create(vertx);
    client.alloc(DType.F32, 4)
      .compose(h -> client.upload(h, Buffer.buffer(new byte[16])).compose(x -> client.free(h)).map(h))
      .compose(freed -> client.download(freed).otherwiseEmpty()) // a freed handle: one failure
      .compose(x -> metrics.poll())
      .compose(x -> ObservabilityEndpoint.listen(vertx, 0, registry, null))
      .compose(server -> web.get(server.actualPort(), "localhost", "/metrics").send())
      .onComplete(test.succeeding(resp -> test.verify(() -> {
        assertEquals(200, resp.statusCode());
        String body = resp.bodyAsString();
        String device = "device=\"" + client.address() + "\"";
        // Every success the device counted (alloc, upload, free and the poll's own stats), each timed once.
        double served = value(body, "vertxcuda_device_requests_served_total", device);
        assertTrue(served >= 4, body);
        assertEquals(served, value(body, "vertxcuda_device_request_seconds_count", "code=\"OK\"", device, "library=\"memory\""));
        assertEquals(1, value(body, "vertxcuda_device_request_seconds_count", "code=\"NOT_FOUND\"", device));
        assertEquals(1, value(body, "vertxcuda_device_requests_failed_total", device));
        assertEquals(0, value(body, "vertxcuda_device_memory_used_bytes", device));
        assertEquals(1, value(body, "vertxcuda_device_ready", device));
        assertEquals(0, value(body, "vertxcuda_device_restarts_total", device));
        assertTrue(value(body, "vertxcuda_device_generation", device) > 0);
        metrics.close();
        test.completeNow();
      })));
  }

  @Test
  void healthIsDownWhileThePoisonedContextIsRebuiltThenUp(Vertx vertx, VertxTestContext test) {
    HealthChecks checks = HealthChecks.create(vertx);
    DeviceHealth health = DeviceHealth.register(checks, client);
    DeviceMetrics metrics = DeviceMetrics.create(vertx, registry, new DeviceMetricsOptions().setPollInterval(60_000));
    Promise<DeviceEvent> changed = Promise.promise();
    client.events(e -> {
      if (e.getType() == DeviceEvent.Type.GENERATION_CHANGED) {
        changed.tryComplete(e);
      }
    });
    WebClient web = WebClient.create(vertx);
    ObservabilityEndpoint.listen(vertx, 0, registry, checks).compose(server -> checks.checkStatus(health.name())
      .compose(up -> {
        test.verify(() -> assertEquals(true, up.getUp(), up.toJson().encode()));
        long generation = up.getData().getLong("generation");
        return new RequestSender(vertx, client.address(), 30_000).request(new FaultRequest(FaultRequest.Kind.POISON))
          .otherwiseEmpty()
          .compose(x -> untilDown(vertx, checks, health.name(), 100))
          .compose(down -> web.get(server.actualPort(), "localhost", "/health").send().map(resp -> {
            test.verify(() -> {
              assertEquals("REBUILDING", down.getData().getString("state"), down.toJson().encode());
              assertEquals(generation + 1, down.getData().getLong("generation"));
              assertEquals(503, resp.statusCode());
            });
            return resp;
          }))
          .compose(x -> changed.future())
          .compose(e -> checks.checkStatus(health.name()).compose(after -> metrics.poll().map(after)))
          .compose(after -> web.get(server.actualPort(), "localhost", "/health").send().map(resp -> {
            test.verify(() -> {
              assertEquals(true, after.getUp(), after.toJson().encode());
              assertEquals(generation + 1, after.getData().getLong("generation"));
              assertEquals(200, resp.statusCode());
              assertEquals(1.0, registry.get("vertxcuda.device.restarts").counter().count());
            });
            return resp;
          }));
      }))
      .onComplete(test.succeeding(x -> {
        health.unregister();
        metrics.close();
        test.completeNow();
      }));
  }

  // The check again every 10 ms until it says DOWN (the poison's answer may come before the device turns).
  private static Future<CheckResult> untilDown(Vertx vertx, HealthChecks checks, String name, int tries) {
    return checks.checkStatus(name).compose(r -> {
      if (!r.getUp()) {
        return Future.succeededFuture(r);
      }
      if (tries == 0) {
        return Future.failedFuture("never DOWN: " + r.toJson().encode());
      }
      Promise<CheckResult> next = Promise.promise();
      vertx.setTimer(10, id -> untilDown(vertx, checks, name, tries - 1).onComplete(next));
      return next.future();
    });
  }

  private static double value(String exposition, String name, String... labels) {
    Matcher m = Pattern.compile("(?m)^" + name + "\\{([^}]*)\\} (\\S+)$").matcher(exposition);
    while (m.find()) {
      boolean all = true;
      for (String l : labels) {
        all &= m.group(1).contains(l);
      }
      if (all) {
        return Double.parseDouble(m.group(2));
      }
    }
    throw new AssertionError(name + " " + String.join(",", labels) + " not in:\n" + exposition);
  }
}
