package com.vertxcuda.device.impl;

import com.vertxcuda.Addresses;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.DeviceState;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.util.function.Supplier;

/**
 * What one device tells the cluster: its entry in the registry — put when its state, generation,
 * load or free memory changes (checked every {@code registryMinInterval} ms) and refreshed every
 * {@code registryRefresh} ms, with a time to live of three refreshes — and its lifecycle events, on
 * its own events address and on the registry's, so one watcher sees the whole cluster. The
 * device verticle decides; this says it. On the device's event loop only.
 */
public final class RegistryPublisher {

  private static final System.Logger LOG = System.getLogger(RegistryPublisher.class.getName());

  private final Vertx vertx;
  private final String node;
  private final int device;
  private final DeviceOptions options;
  private final Supplier<DeviceInfo> info;
  /** What the registry was told last: state, generation, load and free memory. */
  private String published;
  private long refreshTimer = -1;
  private long changeTimer = -1;

  public RegistryPublisher(Vertx vertx, String node, int device, DeviceOptions options, Supplier<DeviceInfo> info) {
    this.vertx = vertx;
    this.node = node;
    this.device = device;
    this.options = options;
    this.info = info;
  }

  /** Starts the refresh and the change check (once the device first serves). */
  public void start() {
    refreshTimer = vertx.setPeriodic(options.getRegistryRefresh(), id -> put());
    changeTimer = vertx.setPeriodic(Math.max(10, options.getRegistryMinInterval()), id -> putIfChanged());
  }

  /** Whether {@link #start} ran: the device served and published READY. */
  public boolean started() {
    return refreshTimer != -1;
  }

  /**
   * Puts the device's entry now (not for a stopped device); completes once the registry has it, or
   * the put failed (logged).
   */
  public Future<Void> put() {
    DeviceInfo now = info.get();
    if (now.getState() == DeviceState.STOPPED) {
      return Future.succeededFuture();
    }
    now.setUpdated(System.currentTimeMillis());
    published = summary(now);
    return DeviceRegistry.put(vertx, now, 3 * options.getRegistryRefresh())
      .onFailure(t -> LOG.log(System.Logger.Level.DEBUG, "registry update failed: " + t))
      .otherwiseEmpty();
  }

  private void putIfChanged() {
    DeviceInfo now = info.get();
    if (now.getState() != DeviceState.STOPPED && !summary(now).equals(published)) {
      put();
    }
  }

  private static String summary(DeviceInfo d) {
    return d.getState() + "/" + d.getGeneration() + "/" + d.getLoad() + "/" + (d.getFreeMemory() >> 20);
  }

  /** Publishes a lifecycle event of the device. */
  public void publish(DeviceEvent.Type type, long oldGeneration, long newGeneration, String reason) {
    DeviceEvent event = new DeviceEvent(type, node, device, oldGeneration, newGeneration, reason);
    vertx.eventBus().publish(Addresses.events(node, device), event);
    vertx.eventBus().publish(Addresses.REGISTRY_EVENTS, event);
  }

  /** Stops the timers and removes the device's entry. */
  public Future<Void> stop() {
    vertx.cancelTimer(refreshTimer);
    vertx.cancelTimer(changeTimer);
    return DeviceRegistry.remove(vertx, Addresses.device(node, device)).mapEmpty();
  }
}
