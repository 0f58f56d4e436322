package com.vertxcuda.device;

import com.vertxcuda.device.impl.Backends;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Consumer;

/**
 * The devices one node serves, deployed with one call and one option set: a {@link DeviceVerticle}
 * per device, each with its own context tier (and, in process isolation, its own device host), so
 * each device is its own failure domain. Clients reach them by address or through placement
 * ({@code DeviceClient.create(vertx, policy)}).
 */
public final class DeviceNode {

  private final Vertx vertx;
  private final List<DeviceVerticle> devices;
  private final List<String> deployments;
  private final List<Integer> ordinals;

  private DeviceNode(Vertx vertx, List<Integer> ordinals, List<DeviceVerticle> devices, List<String> deployments) {
    this.vertx = vertx;
    this.ordinals = List.copyOf(ordinals);
    this.devices = Collections.unmodifiableList(devices);
    this.deployments = Collections.unmodifiableList(deployments);
  }

  /** Deploys every device {@code options} names (every visible one by default). */
  public static Future<DeviceNode> deploy(Vertx vertx, NodeOptions options) {
    return deploy(vertx, options, d -> { });
  }

  /**
   * As {@link #deploy(Vertx, NodeOptions)}; {@code prepare} sees each verticle before it is deployed
   * (to set a request listener). If any device fails to start, those that started are undeployed and
   * the future fails with the first cause.
   */
  public static Future<DeviceNode> deploy(Vertx vertx, NodeOptions options, Consumer<DeviceVerticle> prepare) {
    List<Integer> ordinals;
    try {
      ordinals = ordinals(options);
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(e);
    }
    List<DeviceVerticle> verticles = new ArrayList<>();
    for (int ordinal : ordinals) {
      DeviceVerticle verticle = new DeviceVerticle(new DeviceOptions(options.getDeviceOptions()).setDevice(ordinal));
      prepare.accept(verticle);
      verticles.add(verticle);
    }
    // Device hosts start a JVM each: started all at once on a small host they starve one another
    // (a device host must prove itself on its link within 2 s), so at most half the cores' worth
    // start together. In-process contexts start cheaply, all at once.
    int parallel = Backends.isolation(options.getDeviceOptions()) == Isolation.PROCESS
      ? Math.max(1, Runtime.getRuntime().availableProcessors() / 2) : verticles.size();
    List<Promise<String>> slots = new ArrayList<>();
    verticles.forEach(v -> slots.add(Promise.promise()));
    List<Future<String>> deployed = new ArrayList<>();
    slots.forEach(p -> deployed.add(p.future()));
    for (int i = 0; i < Math.min(parallel, verticles.size()); i++) {
      startFrom(vertx, verticles, slots, i, parallel);
    }
    return Future.join(deployed).transform(ar -> {
      if (ar.succeeded()) {
        List<String> ids = new ArrayList<>();
        deployed.forEach(f -> ids.add(f.result()));
        return Future.succeededFuture(new DeviceNode(vertx, ordinals, verticles, ids));
      }
      List<Future<?>> undeployed = new ArrayList<>();
      deployed.stream().filter(Future::succeeded).forEach(f -> undeployed.add(vertx.undeploy(f.result())));
      Throwable cause = deployed.stream().filter(Future::failed).map(Future::cause).findFirst().orElse(ar.cause());
      return Future.join(undeployed).transform(x -> Future.failedFuture(cause));
    });
  }

  // Deploys device {@code i}, then the one {@code parallel} places after it.
  private static void startFrom(Vertx vertx, List<DeviceVerticle> verticles, List<Promise<String>> slots, int i,
                                int parallel) {
    vertx.deployVerticle(verticles.get(i)).onComplete(ar -> {
      slots.get(i).handle(ar);
      if (i + parallel < verticles.size()) {
        startFrom(vertx, verticles, slots, i + parallel, parallel);
      }
    });
  }

  /**
   * The ordinals {@code options} asks for: its list (checked for duplicates and negatives), or every
   * device visible to the backend the device options select, found without loading a native library.
   */
  public static List<Integer> ordinals(NodeOptions options) {
    List<Integer> asked = options.getDevices();
    if (asked != null && !asked.isEmpty()) {
      if (asked.stream().anyMatch(d -> d == null || d < 0) || asked.stream().distinct().count() != asked.size()) {
        throw new IllegalArgumentException("devices must be distinct ordinals >= 0: " + asked);
      }
      return List.copyOf(asked);
    }
    int count = Backends.visibleDevices(options.getDeviceOptions(), options.getHostDevices());
    if (count <= 0) {
      throw new IllegalArgumentException("no visible device to serve");
    }
    List<Integer> all = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      all.add(i);
    }
    return all;
  }

  /** The deployed devices, in the order of their ordinals as asked. */
  public List<DeviceVerticle> devices() {
    return devices;
  }

  /** The devices' ordinals, in the same order. */
  public List<Integer> ordinals() {
    return ordinals;
  }

  /** The devices' addresses, in the same order. */
  public List<String> addresses() {
    List<String> addresses = new ArrayList<>();
    devices.forEach(d -> addresses.add(d.address()));
    return addresses;
  }

  /** Undeploys every device of this node. */
  public Future<Void> undeploy() {
    List<Future<?>> done = new ArrayList<>();
    deployments.forEach(id -> done.add(vertx.undeploy(id)));
    return Future.join(done).mapEmpty();
  }
}
