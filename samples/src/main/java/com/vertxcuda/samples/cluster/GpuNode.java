package com.vertxcuda.samples.cluster;

import com.vertxcuda.Addresses;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceNode;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.device.NodeOptions;
import com.vertxcuda.internal.Nodes;
import com.vertxcuda.observability.DeviceHealth;
import com.vertxcuda.observability.DeviceMetrics;
import com.vertxcuda.observability.DeviceMetricsOptions;
import com.vertxcuda.observability.DeviceRequestTimer;
import com.vertxcuda.observability.ObservabilityEndpoint;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.HealthChecks;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * A GPU node: joins the cluster and serves its devices through {@link DeviceNode} (each a {@link DeviceVerticle}
 * with its libraries) until it is stopped. Prints one line per device and then {@code READY <node id>}.
 *
 * <pre>java -cp ... com.vertxcuda.samples.cluster.GpuNode --devices 1|0,2|all [--host-devices 4] [--isolation process] [--cluster NAME] [--prometheus-port 9400]</pre>
 */
@Command(name = "node", mixinStandardHelpOptions = true, description = "Serve this machine's GPUs to the cluster.")
public final class GpuNode implements Callable<Integer> {

  @Mixin
  ClusterSettings cluster = new ClusterSettings();

  @Option(names = "--devices", converter = DevicesConverter.class,
    description = "which devices to serve: a count n (0 .. n-1), a list (0,2) or all (default ${DEFAULT-VALUE})")
  String devices = "1";

  @Option(names = "--host-devices", description = "with --devices all on the host backend, how many devices to simulate (default ${DEFAULT-VALUE})")
  int hostDevices = NodeOptions.DEFAULT_HOST_DEVICES;

  @Option(names = "--backend", description = "auto, cuda or host (default ${DEFAULT-VALUE})")
  BackendKind backend = BackendKind.AUTO;

  @Option(names = "--isolation", description = "in_process or process (default: the device's default)")
  Isolation isolation;

  @Option(names = "--device-option", description = "any DeviceOptions field, e.g. ownerMemoryQuota=1048576")
  Map<String, String> deviceOptions = Map.of();

  @Option(names = "--echo", description = "also answer plain Vert.x requests on " + ECHO + " with their body, and serve a plain TCP sink"
    + " (its address on " + StreamAnchor.ADDRESS + "): yardsticks for benchmarks")
  boolean echo;

  @Option(names = "--prometheus-port", description = "serve GET /metrics (Prometheus) and GET /health on this HTTP port (0: any free port; default: none)")
  Integer prometheusPort;

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  /** The echo address of {@code --echo}. */
  public static final String ECHO = "vertx-cuda-bench.echo";

  private volatile Vertx vertx;

  public static void main(String[] args) {
    System.exit(new CommandLine(new GpuNode()).setCaseInsensitiveEnumValuesAllowed(true).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    checkDeviceOptions();
    // One registry for the devices' meters and Vert.x's own (event bus, HTTP server, pools).
    PrometheusMeterRegistry registry = prometheusPort != null ? new PrometheusMeterRegistry(PrometheusConfig.DEFAULT) : null;
    vertx = cluster.start(registry).toCompletionStage().toCompletableFuture().get();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> vertx.close().toCompletionStage().toCompletableFuture().join()));
    DeviceNode served;
    try {
      served = DeviceNode.deploy(vertx, nodeOptions(), d -> {
        if (registry != null) {
          d.setRequestListener(DeviceRequestTimer.create(registry));
        }
      }).toCompletionStage().toCompletableFuture().get();
    } catch (Exception e) {
      System.err.println("vertx-cuda node: the devices failed to start: "
        + (e.getCause() != null ? e.getCause().getMessage() : e.getMessage()));
      vertx.close();
      return 2;
    }
    if (echo) {
      vertx.eventBus().<Object>consumer(ECHO, m -> m.reply(m.body())).completion()
        .toCompletionStage().toCompletableFuture().get();
      // A plain TCP sink beside it (TLS when the bus is): the anchor for bulk transfers.
      String sink = StreamAnchor.serve(vertx).toCompletionStage().toCompletableFuture().get();
      vertx.eventBus().<Object>consumer(StreamAnchor.ADDRESS, m -> m.reply(sink)).completion()
        .toCompletionStage().toCompletableFuture().get();
    }
    String node = Nodes.self(vertx);
    for (String address : served.addresses()) {
      System.out.println("serving " + address);
    }
    if (registry != null) {
      System.out.println("metrics and health on HTTP port " + observe(registry, served) + ": /metrics, /health");
    }
    System.out.println("READY " + node);
    System.out.flush();
    new CountDownLatch(1).await(); // until the process is stopped
    return 0;
  }

  // This node's devices: their meters, request latencies and health, on one HTTP port.
  private int observe(PrometheusMeterRegistry registry, DeviceNode served) throws Exception {
    DeviceMetrics.create(vertx, registry, new DeviceMetricsOptions());
    HealthChecks checks = HealthChecks.create(vertx);
    for (int i = 0; i < served.ordinals().size(); i++) {
      DeviceHealth.register(checks, DeviceClient.create(vertx, new DeviceClientOptions()
        .setNode(Addresses.nodeOf(served.addresses().get(i))).setDevice(served.ordinals().get(i))));
    }
    return ObservabilityEndpoint.listen(vertx, prometheusPort, registry, checks).toCompletionStage().toCompletableFuture()
      .get().actualPort();
  }

  /** The devices and the one option set the command line asks for. */
  NodeOptions nodeOptions() {
    return new NodeOptions().setDevices(ordinals(devices)).setHostDevices(hostDevices).setDeviceOptions(options(0));
  }

  /** {@code --devices}: a count n (0 .. n-1), a list of ordinals, or all (an empty list). */
  static List<Integer> ordinals(String asked) {
    List<Integer> ordinals = new ArrayList<>();
    String a = asked.trim();
    if (a.contains(",")) {
      for (String d : a.split(",")) {
        int ordinal = Integer.parseInt(d.trim());
        if (ordinal < 0) {
          throw new IllegalArgumentException("a device ordinal is at least 0: " + asked);
        }
        ordinals.add(ordinal);
      }
    } else if (!a.equalsIgnoreCase("all")) {
      int count = Integer.parseInt(a);
      if (count < 1) {
        throw new IllegalArgumentException("a count of devices is at least 1: " + asked);
      }
      for (int i = 0; i < count; i++) {
        ordinals.add(i);
      }
    }
    return ordinals;
  }

  /** Refuses a {@code --devices} value that is not a count, a list or all while the command line is parsed. */
  static final class DevicesConverter implements CommandLine.ITypeConverter<String> {
    @Override
    public String convert(String value) {
      try {
        ordinals(value);
        return value;
      } catch (IllegalArgumentException e) {
        throw new CommandLine.TypeConversionException("'" + value + "' is not a count, a list of ordinals (0,2) or all");
      }
    }
  }

  DeviceOptions options(int device) {
    JsonObject json = new DeviceOptions().setDevice(device).setBackend(backend).toJson();
    if (isolation != null) {
      json.put("isolation", isolation.name());
    }
    deviceOptions.forEach((k, v) -> json.put(k, value(v)));
    return new DeviceOptions(json).setDevice(device);
  }

  // Every --device-option names a DeviceOptions field and gives it a value of its type: the JSON
  // converter passes over an unknown key or a value of another type, which would leave the default
  // in place without a word.
  void checkDeviceOptions() {
    JsonObject made = options(0).toJson();
    for (Map.Entry<String, String> e : deviceOptions.entrySet()) {
      Object took = made.getValue(e.getKey());
      if (took == null || !String.valueOf(took).equalsIgnoreCase(e.getValue())) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--device-option " + e.getKey() + "=" + e.getValue()
          + ": DeviceOptions has no field '" + e.getKey() + "' that takes this value");
      }
    }
  }

  private static Object value(String v) {
    if (v.equals("true") || v.equals("false")) {
      return Boolean.valueOf(v);
    }
    try {
      return Long.valueOf(v);
    } catch (NumberFormatException e) {
      return v;
    }
  }
}
