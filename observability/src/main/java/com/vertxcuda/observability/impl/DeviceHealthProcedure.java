package com.vertxcuda.observability.impl;

import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceState;
import com.vertxcuda.GpuReadings;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.Status;

/** One device's health: its state from describe(), the reason from its last event. */
public final class DeviceHealthProcedure implements Handler<Promise<Status>> {

  private final DeviceClient client;
  private final MessageConsumer<DeviceEvent> events;
  private volatile DeviceEvent lastChange;

  public DeviceHealthProcedure(DeviceClient client) {
    this.client = client;
    this.events = client.events(e -> {
      if (e.getType() != DeviceEvent.Type.READY) {
        lastChange = e;
      }
    });
  }

  public String name() {
    return client.address();
  }

  @Override
  public void handle(Promise<Status> result) {
    client.describe().onComplete(ar -> {
      if (ar.failed()) {
        result.tryComplete(Status.KO(new JsonObject().put("reason", ar.cause().getMessage())));
        return;
      }
      DeviceState state = ar.result().getState();
      JsonObject data = new JsonObject().put("state", String.valueOf(state)).put("generation", ar.result().getGeneration());
      if (state == DeviceState.READY) {
        client.stats().onComplete(stats -> result.tryComplete(Status.OK(stats.succeeded() ? gpu(data, stats.result().getGpu()) : data)));
      } else {
        DeviceEvent e = lastChange;
        data.put("reason", e != null ? e.getReason() : "the device is " + state);
        result.tryComplete(Status.KO(data));
      }
    });
  }

  /**
   * Adds what the GPU's own meters say of its health: {@code health} DEGRADED, with the XID and
   * uncorrected ECC errors and the last XID, once the GPU reported such an error since it was first
   * watched; HEALTHY otherwise. Without readings (no NVML) the data is left as it is.
   */
  public static JsonObject gpu(JsonObject data, GpuReadings gpu) {
    if (gpu == null) {
      return data;
    }
    data.put("health", gpu.errorsSeen() ? "DEGRADED" : "HEALTHY").put("xidErrors", gpu.getXidErrors())
      .put("eccUncorrectedErrors", gpu.getEccUncorrectedErrors());
    if (gpu.errorsSeen()) {
      data.put("lastXid", gpu.getLastXid()).put("reason", gpu.getXidErrors() > 0
        ? "the GPU reported " + gpu.getXidErrors() + " XID error(s), the last XID " + gpu.getLastXid()
        : "the GPU reported " + gpu.getEccUncorrectedErrors() + " uncorrected ECC error(s)");
    }
    return data;
  }

  public void close() {
    events.unregister();
  }
}
