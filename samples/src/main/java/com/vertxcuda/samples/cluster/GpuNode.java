package com.vertxcuda.samples.cluster;

import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.impl.Nodes;
import com.vertxcuda.observability.DeviceHealth;
import com.vertxcuda.observability.DeviceMetrics;
import com.vertxcuda.observability.DeviceMetricsOptions;
import com.vertxcuda.observability.DeviceRequestTimer;
import com.vertxcuda.observability.ObservabilityEndpoint;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
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
 * A GPU node: joins the cluster and serves its devices (device 0 .. n-1, each a {@link DeviceVerticle}
 * with its libraries) until it is stopped. Prints one line per device and then {@code READY <node id>}.
 *
 * <pre>java -cp ... com.vertxcuda.samples.cluster.GpuNode --devices 1 [--isolation process] [--cluster NAME] [--prometheus-port 9400]</pre>
 */
@Command(name = "node", mixinStandardHelpOptions = true, description = "Serve this machine's GPUs to the cluster.")
public final class GpuNode implements Callable<Integer> {

  @Mixin
  ClusterSettings cluster = new ClusterSettings();

  @Option(names = "--devices", description = "how many devices to serve, 0 .. n-1 (default ${DEFAULT-VALUE})")
  int devices = 1;

  @Option(names = "--backend", description = "auto, cuda or host (default ${DEFAULT-VALUE})")
  BackendKind backend = BackendKind.AUTO;

  @Option(names = "--isolation", description = "in_process or process (default: the device's default)")
  Isolation isolation;

  @Option(names = "--device-option", description = "any DeviceOptions field, e.g. ownerMemoryQuota=1048576")
  Map<String, String> deviceOptions = Map.of();

  @Option(names = "--echo", description = "also answer plain Vert.x requests on " + ECHO + " with their body (a yardstick for benchmarks)")
  boolean echo;

  @Option(names = "--prometheus-port", description = "serve GET /metrics (Prometheus) and GET /health on this HTTP port (0: any free port; default: none)")
  Integer prometheusPort;

  /** The echo address of {@code --echo}. */
  public static final String ECHO = "vertx-cuda-bench.echo";

  private volatile Vertx vertx;

  public static void main(String[] args) {
    System.exit(new CommandLine(new GpuNode()).setCaseInsensitiveEnumValuesAllowed(true).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    vertx = cluster.start().toCompletionStage().toCompletableFuture().get();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> vertx.close().toCompletionStage().toCompletableFuture().join()));
    PrometheusMeterRegistry registry = prometheusPort != null ? new PrometheusMeterRegistry(PrometheusConfig.DEFAULT) : null;
    List<Future<String>> deployed = new ArrayList<>();
    for (int i = 0; i < devices; i++) {
      DeviceVerticle d = new DeviceVerticle(options(i));
      if (registry != null) {
        d.setRequestListener(DeviceRequestTimer.create(registry));
      }
      deployed.add(vertx.deployVerticle(d));
    }
    try {
      Future.all(deployed).toCompletionStage().toCompletableFuture().get();
    } catch (Exception e) {
      System.err.println("vertx-cuda node: the devices failed to start: " + e.getCause().getMessage());
      vertx.close();
      return 2;
    }
    if (echo) {
      vertx.eventBus().<Object>consumer(ECHO, m -> m.reply(m.body())).completion()
        .toCompletionStage().toCompletableFuture().get();
    }
    String node = Nodes.self(vertx);
    for (int i = 0; i < devices; i++) {
      System.out.println("serving " + com.vertxcuda.Addresses.device(node, i));
    }
    if (registry != null) {
      System.out.println("metrics and health on HTTP port " + observe(registry, node) + ": /metrics, /health");
    }
    System.out.println("READY " + node);
    System.out.flush();
    new CountDownLatch(1).await(); // until the process is stopped
    return 0;
  }

  // This node's devices: their meters, request latencies and health, on one HTTP port.
  private int observe(PrometheusMeterRegistry registry, String node) throws Exception {
    DeviceMetrics.create(vertx, registry, new DeviceMetricsOptions());
    HealthChecks checks = HealthChecks.create(vertx);
    for (int i = 0; i < devices; i++) {
      DeviceHealth.register(checks, DeviceClient.create(vertx, new DeviceClientOptions().setNode(node).setDevice(i)));
    }
    return ObservabilityEndpoint.listen(vertx, prometheusPort, registry, checks).toCompletionStage().toCompletableFuture()
      .get().actualPort();
  }

  DeviceOptions options(int device) {
    JsonObject json = new DeviceOptions().setDevice(device).setBackend(backend).toJson();
    if (isolation != null) {
      json.put("isolation", isolation.name());
    }
    deviceOptions.forEach((k, v) -> json.put(k, value(v)));
    return new DeviceOptions(json).setDevice(device);
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
