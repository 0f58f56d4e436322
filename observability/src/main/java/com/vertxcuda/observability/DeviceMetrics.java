package com.vertxcuda.observability;

import com.vertxcuda.observability.impl.DeviceMetricsImpl;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

/**
 * Micrometer meters of every device of the cluster, from any node: it lists the devices through
 * {@code DeviceRegistry} and polls each one's {@code DeviceClient.stats()} every
 * {@link DeviceMetricsOptions#getPollInterval() pollInterval}, and counts context rebuilds from the
 * devices' GENERATION_CHANGED events. Every meter is tagged {@code device} (the device's address):
 *
 * <ul>
 *   <li>{@code vertxcuda.device.memory.used} (bytes held by live buffers), {@code vertxcuda.device.buffers},
 *   {@code vertxcuda.device.requests.inflight}, {@code vertxcuda.device.requests.queued},
 *   {@code vertxcuda.device.generation}, {@code vertxcuda.device.ready} (1 when READY): gauges, as of the last poll;</li>
 *   <li>{@code vertxcuda.device.requests.served}, {@code vertxcuda.device.requests.failed} (tag {@code code}):
 *   the device's own counters since it started;</li>
 *   <li>{@code vertxcuda.device.restarts}: GENERATION_CHANGED events heard since this node started watching;</li>
 *   <li>the GPU's own meters, as NVIDIA's driver (NVML) reports them to the serving node
 *   ({@code DeviceStats.getGpu()}), each one the GPU supports: gauges {@code vertxcuda.gpu.utilization}
 *   and {@code vertxcuda.gpu.memory.utilization} (percent), {@code vertxcuda.gpu.memory.used} and
 *   {@code vertxcuda.gpu.memory.total} (bytes, every process's), {@code vertxcuda.gpu.power} (watts),
 *   {@code vertxcuda.gpu.temperature} (celsius), {@code vertxcuda.gpu.sm.clock} and
 *   {@code vertxcuda.gpu.memory.clock} (hertz), {@code vertxcuda.gpu.throttle} (1 while the clocks are
 *   held back, tag {@code reason}: sw_power_cap, hw_thermal...); counters {@code vertxcuda.gpu.energy}
 *   (joules since the driver loaded), {@code vertxcuda.gpu.xid.errors} and {@code vertxcuda.gpu.ecc.errors}
 *   (tag {@code type}: corrected, uncorrected; both since the serving node began watching). In
 *   Prometheus: {@code vertxcuda_gpu_utilization_percent}, {@code vertxcuda_gpu_power_watts},
 *   {@code vertxcuda_gpu_energy_joules_total}, {@code vertxcuda_gpu_xid_errors_total}... A device with
 *   no NVML readings (the host backend, no driver) has none of them.</li>
 * </ul>
 *
 * The latency of each request needs the serving node: see {@link DeviceRequestTimer}. A device no
 * longer listed loses its meters.
 */
public interface DeviceMetrics {

  /** Starts watching; the meters appear in {@code registry} after the first poll. */
  static DeviceMetrics create(Vertx vertx, MeterRegistry registry, DeviceMetricsOptions options) {
    return new DeviceMetricsImpl(vertx, registry, new DeviceMetricsOptions(options));
  }

  /** Polls now: the list of devices and each one's counters; completes when every answer is in. */
  Future<Void> poll();

  /** Stops watching and removes the meters. */
  Future<Void> close();
}
