package com.vertxcuda.observability.impl;

import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceState;
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
        result.tryComplete(Status.OK(data));
      } else {
        DeviceEvent e = lastChange;
        data.put("reason", e != null ? e.getReason() : "the device is " + state);
        result.tryComplete(Status.KO(data));
      }
    });
  }

  public void close() {
    events.unregister();
  }
}
