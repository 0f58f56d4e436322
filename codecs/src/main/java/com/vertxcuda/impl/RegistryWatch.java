package com.vertxcuda.impl;

import com.vertxcuda.Addresses;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.message.DeviceEvent;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

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
    // The generations listed now are where each device's confirmations start.
    Future<Void> listing = DeviceRegistry.list(vertx).map(listed -> {
      listed.forEach(d -> seen.putIfAbsent(d.getAddress(), new DeviceEvent(
        DeviceEvent.Type.READY, d.getNode(), d.getDevice(), d.getGeneration(), d.getGeneration(), "listed")));
      return null;
    });
    MessageConsumer<Object> consumer = vertx.eventBus().consumer(Addresses.REGISTRY_EVENTS, m -> {
      Object body = m.body();
      if (!(body instanceof DeviceEvent) || !valid((DeviceEvent) body)) {
        IGNORED.incrementAndGet();
        return;
      }
      DeviceEvent e = (DeviceEvent) body;
      String address = Addresses.device(e.getNode(), e.getDevice());
      devices.computeIfAbsent(address, a -> {
        DeviceClient client = DeviceClient.create(vertx,
          new DeviceClientOptions().setNode(e.getNode()).setDevice(e.getDevice()));
        TrustedEvents trusted = new TrustedEvents(client::describe, deliver, IGNORED);
        trusted.startFrom(listing.map(x -> {
          DeviceEvent listed = seen.get(a);
          return listed == null ? 0L : listed.getNewGeneration();
        }));
        return trusted;
      }).offer(e);
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
