package com.vertxcuda.cli;

import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.DeviceStats;
import com.vertxcuda.GpuReadings;
import com.vertxcuda.device.nvml.Nvml;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.cuda.CudaUnavailableException;
import com.vertxcuda.device.context.BackendSelection;
import com.vertxcuda.device.spi.Backend;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.samples.cluster.ClusterSettings;
import io.vertx.core.Vertx;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.util.List;
import java.util.concurrent.Callable;

/**
 * This machine's devices as the toolkit's backend selection sees them (nothing deployed), or, with
 * any cluster option, the devices the cluster's registry lists with their state and load. Each line
 * ends with the GPU's own meters as NVIDIA's driver (NVML) reads them (utilisation, memory used by
 * every process, power, temperature, SM and memory clocks, throttle reasons, XID and uncorrected ECC
 * errors), or "gpu n/a" where there are none (no NVIDIA driver, the host backend).
 */
@Command(name = "devices", mixinStandardHelpOptions = true,
  description = "List this machine's devices, or with any cluster option the cluster's.")
final class Devices implements Callable<Integer> {

  @Mixin
  ClusterSettings cluster = new ClusterSettings();

  @Option(names = "--wait", description = "seconds to wait for the cluster's registry to list a device (default ${DEFAULT-VALUE})")
  int waitSeconds = 5;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    boolean clustered = spec.mixins().get("cluster").options().stream().map(OptionSpec::longestName)
      .anyMatch(spec.commandLine().getParseResult()::hasMatchedOption);
    return clustered ? cluster() : local();
  }

  private int local() throws Exception {
    DeviceOptions options = new DeviceOptions();
    Backend backend = BackendSelection.select(options);
    for (int device = 0; ; device++) {
      if (device > 0) {
        if (!backend.name().equals("cuda")) {
          break; // the host backend is one device per verticle: nothing more to list
        }
        try {
          BackendSelection.select(new DeviceOptions().setDevice(device));
        } catch (CudaUnavailableException e) {
          break; // past the last device
        }
      }
      DeviceContext context = backend.open(device);
      try {
        long[] memory = context.memoryInfo();
        System.out.printf("device %d  %s%s  %s backend  %d MiB free of %d MiB  %s%n", device, context.deviceName(),
          context.computeCapability().isEmpty() ? "" : " (" + context.computeCapability() + ")", backend.name(),
          memory[0] >> 20, memory[1] >> 20, gpu(Nvml.readOnce(context.pciBusId())));
      } finally {
        context.close(false);
      }
    }
    return 0;
  }

  private int cluster() throws Exception {
    Vertx vertx = cluster.start().await();
    try {
      long deadline = System.currentTimeMillis() + waitSeconds * 1000L;
      List<DeviceInfo> devices = DeviceRegistry.list(vertx).await();
      while (devices.isEmpty() && System.currentTimeMillis() < deadline) {
        Thread.sleep(250); // the registry is a shared map: polled, there is nothing to wait on
        devices = DeviceRegistry.list(vertx).await();
      }
      if (devices.isEmpty()) {
        System.out.println("no devices in the cluster's registry after " + waitSeconds + " s");
        return 1;
      }
      for (DeviceInfo d : devices) {
        // The GPU's meters come with the device's stats, read by the node that serves it.
        DeviceStats stats = DeviceClient.create(vertx, d).stats().otherwiseEmpty().await();
        System.out.printf("%s  %s  %s, %s  %s  load %d  %d MiB free of %d MiB  %s%n", d.getAddress(), d.getName(),
          d.getBackend(), d.getIsolation(), d.getState(), d.getLoad(), d.getFreeMemory() >> 20, d.getTotalMemory() >> 20,
          gpu(stats == null ? null : stats.getGpu()));
      }
      return 0;
    } finally {
      vertx.close().await();
    }
  }

  /** The GPU's meters as one column group, or "gpu n/a" without them; what the GPU does not report reads "n/a". */
  static String gpu(GpuReadings r) {
    if (r == null) {
      return "gpu n/a";
    }
    return "gpu " + or(r.getUtilizationPercent(), "%d %%") + "  " + or(r.getMemoryUsedBytes() >> 20, "%d MiB used")
      + "  " + (r.getPowerWatts() < 0 ? "n/a" : String.format("%.0f W", r.getPowerWatts()))
      + "  " + or(r.getTemperatureCelsius(), "%d C") + "  SM " + or(mhz(r.getSmClockHz()), "%d MHz")
      + "  mem " + or(mhz(r.getMemoryClockHz()), "%d MHz")
      + "  throttle " + (r.getThrottleReasons() < 0 ? "n/a" : "0x" + Long.toHexString(r.getThrottleReasons()))
      + "  xid " + r.getXidErrors() + "  ecc " + or(r.getEccUncorrectedErrors(), "%d");
  }

  private static long mhz(long hz) {
    return hz < 0 ? -1 : hz / 1_000_000;
  }

  private static String or(long value, String format) {
    return value < 0 ? "n/a" : String.format(format, value);
  }
}
