package com.vertxcuda.impl;

import com.vertxcuda.Addresses;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.message.DeviceEvent;
import com.vertxcuda.message.DeviceInfo;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;

/**
 * {@link DeviceRegistry#watch}: the registry's events address, each event confirmed with the device
 * it names ({@link TrustedEvents}, one per device), plus a LOST raised here for each device seen
 * whose node leaves the cluster. The handler runs on the watcher's context.
 */
public final class RegistryWatch {

  /** What the registry dropped in this JVM: entries its listings left out, events its watchers did. */
  public static final AtomicLong IGNORED = new AtomicLong();

  private RegistryWatch() {
  }

  @SuppressWarnings("unchecked")
  public static MessageConsumer<DeviceEvent> start(Vertx vertx, Handler<DeviceEvent> handler) {
    Map<String, DeviceEvent> seen = new ConcurrentHashMap<>();
    Map<String, TrustedEvents> devices = new ConcurrentHashMap<>();
    Handler<DeviceEvent> deliver = e -> {
      String address = Addresses.device(e.getNode(), e.getDevice());
      if (e.getType() == DeviceEvent.Type.REMOVED || e.getType() == DeviceEvent.Type.LOST) {
        seen.remove(address);
      } else {
        seen.put(address, e);
      }
      handler.handle(e);
    };
    io.vertx.core.Context context = vertx.getOrCreateContext();
    Promise<Void> listing = Promise.promise();
    // One confirmer per device, its confirmations starting from the generation listed now.
    BiFunction<String, Integer, TrustedEvents> trusted = (node, device) ->
      devices.computeIfAbsent(Addresses.device(node, device), a -> {
        DeviceClient client = DeviceClient.create(vertx, new DeviceClientOptions().setNode(node).setDevice(device));
        TrustedEvents t = new TrustedEvents(client::describe, deliver, IGNORED);
        t.startFrom(listing.future().map(x -> {
          DeviceEvent listed = seen.get(a);
          return listed == null ? 0L : listed.getNewGeneration();
        }));
        return t;
      });
    DeviceRegistry.list(vertx).onComplete(ar -> {
      if (ar.succeeded()) {
        for (DeviceInfo d : ar.result()) {
          seen.putIfAbsent(d.getAddress(), new DeviceEvent(
            DeviceEvent.Type.READY, d.getNode(), d.getDevice(), d.getGeneration(), d.getGeneration(), "listed"));
          // Made now, not on the device's first event: that one is confirmed as fast as the next.
          trusted.apply(d.getNode(), d.getDevice());
        }
      }
      listing.complete();
    });
    MessageConsumer<Object> consumer = vertx.eventBus().consumer(Addresses.REGISTRY_EVENTS, m -> {
      Object body = m.body();
      if (!(body instanceof DeviceEvent) || !valid((DeviceEvent) body)) {
        IGNORED.incrementAndGet();
        return;
      }
      DeviceEvent e = (DeviceEvent) body;
      trusted.apply(e.getNode(), e.getDevice()).offer(e);
    });
    ClusterWatch.of(vertx).onLeftWhileRegistered(consumer, context, node -> seen.values().removeIf(e -> {
      if (!e.getNode().equals(node)) {
        return false;
      }
      handler.handle(new DeviceEvent(DeviceEvent.Type.LOST, node, e.getDevice(), e.getNewGeneration(),
        e.getNewGeneration(), "node " + node + " left the cluster"));
      return true;
    }));
    return (MessageConsumer<DeviceEvent>) (MessageConsumer<?>) consumer;
  }

  /** Whether {@code e} is an event a device would publish. */
  private static boolean valid(DeviceEvent e) {
    try {
      Addresses.device(e.getNode(), e.getDevice());
    } catch (RuntimeException x) {
      return false;
    }
    return e.getType() != null && e.getOldGeneration() >= 0 && e.getNewGeneration() >= e.getOldGeneration();
  }

}
