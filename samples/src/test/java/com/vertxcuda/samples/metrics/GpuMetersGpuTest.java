package com.vertxcuda.samples.metrics;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.GpuReadings;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.cuda.CudaBackend;
import com.vertxcuda.device.cuda.CudaUnavailableException;
import com.vertxcuda.observability.DeviceHealth;
import com.vertxcuda.observability.DeviceMetrics;
import com.vertxcuda.observability.DeviceMetricsOptions;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.ext.healthchecks.CheckResult;
import io.vertx.ext.healthchecks.HealthChecks;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The GPU's NVML meters on a real GPU: present in the stats, as Micrometer meters under the names the
 * Grafana dashboard reads, and in the health data, with plausible values; utilisation rises under a
 * loop of GEMMs.
 */
@Tag("gpu")
class GpuMetersGpuTest {

  private static final int N = 4096;
  private Vertx vertx;

  @BeforeAll
  static void needsGpu() {
    try {
      CudaBackend.load(new DeviceOptions());
    } catch (CudaUnavailableException e) {
      assumeTrue(false, "no usable GPU: " + e.getMessage());
    }
  }

  @BeforeEach
  void vertx() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void close() throws Exception {
    await(vertx.close());
  }

  @Test
  void metersArePlausibleAndUtilisationRisesUnderGemms() throws Exception {
    await(vertx.deployVerticle(new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.CUDA).setGpuMetersInterval(100))));
    DeviceClient device = DeviceClient.create(vertx);
    BlasClient blas = BlasClient.create(vertx);
    String bus = await(device.describe()).getPciBusId();
    assertTrue(bus != null && !bus.isEmpty(), "CUDA names the GPU's PCI bus id");

    GpuReadings idle = firstReadings(device);
    assertNotNull(idle, "NVML readings within 10 s (is libnvidia-ml.so.1 there?)");

    long elements = (long) N * N;
    BufferHandle a = await(device.alloc(DType.F32, elements));
    BufferHandle b = await(device.alloc(DType.F32, elements));
    BufferHandle c = await(device.alloc(DType.F32, elements));
    await(device.fill(a, 1f));
    await(device.fill(b, 1f));
    // Four GEMMs in flight at a time for 3 s keep the GPU busy; the stats are read as it runs.
    int busiest = -1;
    double peakWatts = 0;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    long nextRead = 0;
    while (System.nanoTime() < deadline) {
      List<Future<?>> batch = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        batch.add(blas.gemm(Transpose.N, Transpose.N, N, N, N, 1, a, N, b, N, 0, c, N));
      }
      await(Future.all(batch));
      if (System.nanoTime() > nextRead) {
        nextRead = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
        GpuReadings r = await(device.stats()).getGpu();
        busiest = Math.max(busiest, r.getUtilizationPercent());
        peakWatts = Math.max(peakWatts, r.getPowerWatts());
      }
    }
    GpuReadings loaded = await(device.stats()).getGpu();

    assertTrue(busiest >= 50 && busiest >= idle.getUtilizationPercent(),
      "utilisation under GEMMs " + busiest + " %, idle " + idle.getUtilizationPercent() + " %");
    assertTrue(peakWatts > 0, "power " + peakWatts + " W");
    assertTrue(loaded.getTemperatureCelsius() > 0, "temperature " + loaded.getTemperatureCelsius() + " C");
    assertTrue(loaded.getMemoryUsedBytes() >= 3 * elements * 4, "memory used " + loaded.getMemoryUsedBytes()
      + " B holds this test's three matrices");
    assertTrue(loaded.getMemoryTotalBytes() > loaded.getMemoryUsedBytes(), loaded.toString());
    assertTrue(loaded.getSmClockHz() > 100_000_000L, "SM clock " + loaded.getSmClockHz() + " Hz");
    assertTrue(loaded.getMemoryClockHz() > 100_000_000L, "memory clock " + loaded.getMemoryClockHz() + " Hz");
    assertTrue(loaded.getThrottleReasons() >= 0, "throttle reasons read");
    assertEquals(0, loaded.getXidErrors(), "no XID error on a healthy GPU");

    // The meters and the health check, as an operator reads them.
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    DeviceMetrics metrics = DeviceMetrics.create(vertx, registry, new DeviceMetricsOptions().setPollInterval(60_000));
    await(metrics.poll());
    String scrape = registry.scrape();
    for (String name : List.of("vertxcuda_gpu_utilization_percent", "vertxcuda_gpu_power_watts",
      "vertxcuda_gpu_memory_used_bytes", "vertxcuda_gpu_memory_total_bytes", "vertxcuda_gpu_temperature_celsius",
      "vertxcuda_gpu_sm_clock_hertz", "vertxcuda_gpu_memory_clock_hertz", "vertxcuda_gpu_xid_errors_total",
      "vertxcuda_gpu_throttle")) {
      assertTrue(scrape.contains(name + "{"), name + " in:\n" + scrape);
    }
    HealthChecks checks = HealthChecks.create(vertx);
    DeviceHealth health = DeviceHealth.register(checks, device);
    CheckResult status = await(checks.checkStatus(health.name()));
    assertTrue(status.getUp(), status.toJson().encode());
    assertEquals("HEALTHY", status.getData().getString("health"), status.toJson().encode());
    health.unregister();
    await(metrics.close());
    registry.close();

    System.out.printf("[figure] NVML meters (%s): utilisation %d %% idle, %d %% under %d-GEMMs; power %.0f W idle, %.0f W"
        + " peak; %d C; SM %d MHz, memory %d MHz; throttle 0x%x; energy %.0f J since the driver loaded%n",
      bus, idle.getUtilizationPercent(), busiest, N, idle.getPowerWatts(), peakWatts, loaded.getTemperatureCelsius(),
      loaded.getSmClockHz() / 1_000_000, loaded.getMemoryClockHz() / 1_000_000, loaded.getThrottleReasons(),
      loaded.getEnergyJoules());
  }

  // The stats every 50 ms until they carry the GPU's readings (the sampler's first read), for 10 s at most.
  private static GpuReadings firstReadings(DeviceClient device) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      GpuReadings r = await(device.stats()).getGpu();
      if (r != null) {
        return r;
      }
      Thread.sleep(50); // the sampler's thread reads on its own clock: nothing to wait on but its next read
    }
    return null;
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }
}
