package com.vertxcuda.observability.impl;

import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.DeviceState;
import com.vertxcuda.DeviceStats;
import com.vertxcuda.GpuReadings;
import com.vertxcuda.observability.DeviceMetrics;
import com.vertxcuda.observability.DeviceMetricsOptions;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToDoubleFunction;

/** Polls the registry and each device's stats; the meters read the last answer. State on one context. */
public final class DeviceMetricsImpl implements DeviceMetrics {

  private static final System.Logger LOG = System.getLogger(DeviceMetricsImpl.class.getName());

  private final Vertx vertx;
  private final MeterRegistry registry;
  private final Map<String, Watched> devices = new HashMap<>();
  private final long timer;
  /** Closed: a listing that comes back afterwards registers nothing (its meters would stay for good). */
  private boolean closed;

  public DeviceMetricsImpl(Vertx vertx, MeterRegistry registry, DeviceMetricsOptions options) {
    this.vertx = vertx;
    this.registry = registry;
    this.timer = vertx.setPeriodic(0, options.getPollInterval(), id -> poll());
  }

  @Override
  public Future<Void> poll() {
    return DeviceRegistry.list(vertx).compose(listed -> {
      List<Future<?>> polls = new ArrayList<>();
      synchronized (this) {
        if (closed) {
          return Future.<Void>succeededFuture();
        }
        Set<String> seen = new HashSet<>();
        for (DeviceInfo d : listed) {
          seen.add(d.getAddress());
          polls.add(devices.computeIfAbsent(d.getAddress(), a -> new Watched(DeviceClient.create(vertx, d))).poll());
        }
        devices.keySet().removeIf(a -> {
          if (seen.contains(a)) {
            return false;
          }
          devices.get(a).close();
          return true;
        });
      }
      return Future.join(polls).<Void>mapEmpty().otherwiseEmpty();
    }).onFailure(t -> LOG.log(System.Logger.Level.DEBUG, "listing the devices failed: " + t));
  }

  @Override
  public synchronized Future<Void> close() {
    closed = true;
    vertx.cancelTimer(timer);
    devices.values().forEach(Watched::close);
    devices.clear();
    return Future.succeededFuture();
  }

  /** NVML's clock throttle reasons, by bit ({@code nvmlClocksThrottleReason*}). */
  private static final String[] THROTTLE_REASONS = {"gpu_idle", "applications_clocks", "sw_power_cap", "hw_slowdown",
    "sync_boost", "sw_thermal", "hw_thermal", "hw_power_brake", "display_clocks"};

  /** One device's meters and its last stats. */
  private final class Watched {
    private final DeviceClient client;
    private final Tags tags;
    private final List<Meter> meters = new ArrayList<>();
    private final Set<String> codes = new HashSet<>();
    private boolean gpuMeters;
    private final Counter restarts;
    private final MessageConsumer<DeviceEvent> events;
    private volatile DeviceStats last = new DeviceStats();

    Watched(DeviceClient client) {
      this.client = client;
      this.tags = Tags.of("device", client.address());
      gauge("vertxcuda.device.memory.used", "bytes held by live buffers", "bytes", DeviceStats::getBytesAllocated);
      gauge("vertxcuda.device.buffers", "live buffers", null, DeviceStats::getBuffersAllocated);
      gauge("vertxcuda.device.requests.inflight", "requests forwarded to the context and not yet answered", null, DeviceStats::getInFlight);
      gauge("vertxcuda.device.requests.queued", "requests waiting for a context", null, DeviceStats::getQueueDepth);
      gauge("vertxcuda.device.generation", "the context generation", null, DeviceStats::getGeneration);
      gauge("vertxcuda.device.ready", "1 while the device is READY", null, s -> s.getState() == DeviceState.READY ? 1 : 0);
      meters.add(FunctionCounter.builder("vertxcuda.device.requests.served", this, w -> w.last.getOperationsServed())
        .description("requests answered with success since the device started").tags(tags).register(registry));
      restarts = Counter.builder("vertxcuda.device.restarts").description("context rebuilds (GENERATION_CHANGED events)")
        .tags(tags).register(registry);
      meters.add(restarts);
      events = client.events(e -> {
        if (e.getType() == DeviceEvent.Type.GENERATION_CHANGED) {
          restarts.increment();
        }
      });
    }

    private void gauge(String name, String description, String unit, ToDoubleFunction<DeviceStats> value) {
      meters.add(Gauge.builder(name, this, w -> value.applyAsDouble(w.last)).description(description).baseUnit(unit)
        .tags(tags).register(registry));
    }

    Future<DeviceStats> poll() {
      return client.stats().onSuccess(s -> {
        last = s;
        if (s.getFailuresByCode() != null) {
          s.getFailuresByCode().keySet().forEach(this::failures);
        }
        if (s.getGpu() != null) {
          gpuMeters(s.getGpu());
        }
      });
    }

    // The GPU's NVML meters, once its first readings come, each one the GPU supports (it reads -1 otherwise).
    private synchronized void gpuMeters(GpuReadings first) {
      if (gpuMeters) {
        return;
      }
      gpuMeters = true;
      gpuGauge(first, "vertxcuda.gpu.utilization", "percent of the last sample period a kernel ran", "percent", GpuReadings::getUtilizationPercent);
      gpuGauge(first, "vertxcuda.gpu.memory.utilization", "percent of the last sample period device memory was read or written", "percent",
        GpuReadings::getMemoryUtilizationPercent);
      gpuGauge(first, "vertxcuda.gpu.memory.used", "device memory in use by every process", "bytes", r -> r.getMemoryUsedBytes());
      gpuGauge(first, "vertxcuda.gpu.memory.total", "the GPU's device memory", "bytes", r -> r.getMemoryTotalBytes());
      gpuGauge(first, "vertxcuda.gpu.power", "the board's power draw", "watts", GpuReadings::getPowerWatts);
      gpuGauge(first, "vertxcuda.gpu.temperature", "the GPU's temperature", "celsius", GpuReadings::getTemperatureCelsius);
      gpuGauge(first, "vertxcuda.gpu.sm.clock", "the SM clock", "hertz", r -> r.getSmClockHz());
      gpuGauge(first, "vertxcuda.gpu.memory.clock", "the memory clock", "hertz", r -> r.getMemoryClockHz());
      gpuCounter(first, "vertxcuda.gpu.energy", "energy used since the driver loaded", "joules", Tags.empty(), GpuReadings::getEnergyJoules);
      gpuCounter(first, "vertxcuda.gpu.xid.errors", "XID errors since the serving node began watching the GPU", null, Tags.empty(),
        r -> r.getXidErrors());
      gpuCounter(first, "vertxcuda.gpu.ecc.errors", "ECC memory errors since the serving node began watching the GPU", null,
        Tags.of("type", "corrected"), r -> r.getEccCorrectedErrors());
      gpuCounter(first, "vertxcuda.gpu.ecc.errors", "ECC memory errors since the serving node began watching the GPU", null,
        Tags.of("type", "uncorrected"), r -> r.getEccUncorrectedErrors());
      if (first.getThrottleReasons() >= 0) {
        for (int bit = 0; bit < THROTTLE_REASONS.length; bit++) {
          long mask = 1L << bit;
          meters.add(Gauge.builder("vertxcuda.gpu.throttle", this, w -> {
              GpuReadings r = w.last.getGpu();
              return r != null && r.getThrottleReasons() >= 0 && (r.getThrottleReasons() & mask) != 0 ? 1 : 0;
            })
            .description("1 while the clocks are held back for this reason").tags(tags.and("reason", THROTTLE_REASONS[bit]))
            .register(registry));
        }
      }
    }

    private void gpuGauge(GpuReadings first, String name, String description, String unit, ToDoubleFunction<GpuReadings> value) {
      if (value.applyAsDouble(first) >= 0) {
        meters.add(Gauge.builder(name, this, w -> gpuValue(w, value)).description(description).baseUnit(unit)
          .tags(tags).register(registry));
      }
    }

    private void gpuCounter(GpuReadings first, String name, String description, String unit, Tags more,
      ToDoubleFunction<GpuReadings> value) {
      if (value.applyAsDouble(first) >= 0) {
        // A counter keeps its last value through a poll without readings: falling back would read as a reset.
        double[] seen = {0};
        meters.add(FunctionCounter.builder(name, this, w -> {
            double v = gpuValue(w, value);
            if (!Double.isNaN(v)) {
              seen[0] = v;
            }
            return seen[0];
          }).description(description)
          .baseUnit(unit).tags(tags.and(more)).register(registry));
      }
    }

    // The last poll's value; NaN once a poll comes back without readings or the GPU stops reporting it.
    private static double gpuValue(Watched w, ToDoubleFunction<GpuReadings> value) {
      GpuReadings r = w.last.getGpu();
      double v = r == null ? -1 : value.applyAsDouble(r);
      return v < 0 ? Double.NaN : v;
    }

    private synchronized void failures(String code) {
      if (codes.add(code)) {
        meters.add(FunctionCounter.builder("vertxcuda.device.requests.failed", this,
            w -> w.last.getFailuresByCode() == null ? 0 : w.last.getFailuresByCode().getOrDefault(code, 0L))
          .description("requests answered with a failure since the device started, by failure code")
          .tags(tags.and("code", code)).register(registry));
      }
    }

    void close() {
      events.unregister();
      meters.forEach(registry::remove);
    }
  }
}
