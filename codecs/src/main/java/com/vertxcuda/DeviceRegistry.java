package com.vertxcuda;

import com.vertxcuda.impl.ClusterWatch;
import com.vertxcuda.impl.TrustedEvents;
import com.vertxcuda.message.DeviceEvent;
import com.vertxcuda.message.DeviceInfo;
import com.vertxcuda.message.DeviceState;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The cluster-wide list of devices with their load, kept in a shared async map (cluster-wide when
 * the event bus is clustered). A device publishes its entry when its state or load changes (at
 * most every {@code registryMinInterval} ms) and refreshes it before it expires; it removes it when
 * undeployed. A device of a node that left the cluster is never listed, whatever the map still
 * holds: the listing keeps only the nodes this node's cluster manager counts as members.
 */
public final class DeviceRegistry {

  private DeviceRegistry() {
  }

  private static final AtomicLong IGNORED = new AtomicLong();

  /**
   * Every device currently registered, on any node. Entries that are not valid device entries are
   * left out and counted in {@link #ignoredEntries()}: a value that is not a JSON object or does not
   * convert, or one without node, address or state, whose address is not its node's and device's,
   * or with a negative device index, generation or load.
   */
  public static Future<List<DeviceInfo>> list(Vertx vertx) {
    ClusterWatch watch = ClusterWatch.of(vertx);
    return watch.checkPolicy().compose(v -> map(vertx)).compose(AsyncMap::values).map(values -> {
      List<DeviceInfo> devices = new ArrayList<>();
      for (Object v : (List<?>) values) { // as Object: a value of another type must not reach a cast
        DeviceInfo d = valid(v);
        if (d == null) {
          IGNORED.incrementAndGet();
        } else if (watch.isMember(d.getNode())) {
          devices.add(d);
        }
      }
      devices.sort(Comparator.comparing(DeviceInfo::getAddress));
      return devices;
    });
  }

  /**
   * How many registry entries {@link #list} (and so {@link #leastLoaded}) has left out as not valid,
   * and events {@link #watch} has dropped as not valid or not confirmed by their device, in this
   * JVM since it started, counted once per listing or watcher that met one.
   */
  public static long ignoredEntries() {
    return IGNORED.get();
  }

  // The entry as a DeviceInfo, or null when it is not one a device would publish.
  private static DeviceInfo valid(Object value) {
    if (!(value instanceof JsonObject)) {
      return null;
    }
    DeviceInfo d;
    try {
      d = new DeviceInfo((JsonObject) value);
      if (d.getNode() == null || d.getAddress() == null || d.getState() == null || d.getDevice() < 0
        || d.getGeneration() < 0 || d.getLoad() < 0 || !d.getAddress().equals(Addresses.device(d.getNode(), d.getDevice()))) {
        return null;
      }
    } catch (RuntimeException e) {
      return null;
    }
    return d;
  }

  /** The ready device with the least load ({@link PlacementPolicy#leastLoaded()}); CONTEXT_LOST if there is none. */
  public static Future<DeviceInfo> leastLoaded(Vertx vertx) {
    return choose(vertx, PlacementPolicy.leastLoaded());
  }

  /**
   * The ready device {@code policy} picks ({@link PlacementPolicy}); CONTEXT_LOST if there is none
   * or none suits it, or the policy's own failure.
   */
  public static Future<DeviceInfo> choose(Vertx vertx, PlacementPolicy policy) {
    return list(vertx).compose(devices -> {
      List<DeviceInfo> ready = new ArrayList<>();
      for (DeviceInfo d : devices) {
        if (d.getState() == DeviceState.READY) {
          ready.add(d);
        }
      }
      try {
        return Future.succeededFuture(Placements.jvm().choose(policy, ready));
      } catch (RuntimeException e) {
        return Future.failedFuture(Failures.toCudaException(e));
      }
    });
  }

  /**
   * Watches devices of the whole cluster come and go: {@code handler} hears every device's READY,
   * GENERATION_CHANGED, LOST and REMOVED events, and a LOST event (raised on this node) for each
   * device it has seen whose node leaves the cluster. Starts with the devices listed now. Each
   * event is confirmed with the device it names before it is delivered, as
   * {@link DeviceClient#events} does; one that is not valid, that the device does not confirm, or
   * that repeats one delivered is dropped and counted in {@link #ignoredEntries()}. Unregister the
   * consumer to stop.
   */
  @SuppressWarnings("unchecked")
  public static MessageConsumer<DeviceEvent> watch(Vertx vertx, Handler<DeviceEvent> handler) {
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
    Future<Void> listing = list(vertx).map(listed -> {
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
  static boolean valid(DeviceEvent e) {
    try {
      Addresses.device(e.getNode(), e.getDevice());
    } catch (RuntimeException x) {
      return false;
    }
    return e.getType() != null && e.getOldGeneration() >= 0 && e.getNewGeneration() >= e.getOldGeneration();
  }

  /** Publishes (or refreshes) a device's entry; it expires after {@code ttlMillis}. */
  public static Future<Void> put(Vertx vertx, DeviceInfo device, long ttlMillis) {
    return map(vertx).compose(m -> m.put(device.getAddress(), device.toJson(), ttlMillis));
  }

  /** Removes a device's entry. */
  public static Future<Void> remove(Vertx vertx, String address) {
    return map(vertx).compose(m -> m.remove(address)).mapEmpty();
  }

  private static Future<AsyncMap<String, JsonObject>> map(Vertx vertx) {
    return vertx.sharedData().getAsyncMap(Addresses.REGISTRY_MAP);
  }
}
