package com.vertxcuda;

import com.vertxcuda.internal.ClusterMaps;
import com.vertxcuda.internal.ClusterWatch;
import com.vertxcuda.impl.RegistryWatch;
import com.vertxcuda.internal.CudaRuntime;
import com.vertxcuda.message.DeviceEvent;
import io.vertx.codegen.annotations.GenIgnore;
import io.vertx.codegen.annotations.VertxGen;
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

/**
 * The cluster-wide list of devices with their load, kept in a shared async map (cluster-wide when
 * the event bus is clustered). A device publishes its entry when its state or load changes (at
 * most every {@code registryMinInterval} ms) and refreshes it before it expires; it removes it when
 * undeployed. A device of a node that left the cluster is never listed, whatever the map still
 * holds: the listing keeps only the nodes this node's cluster manager counts as members.
 */
@VertxGen
public interface DeviceRegistry {

  /**
   * Every device currently registered, on any node. Entries that are not valid device entries are
   * left out and counted in {@link #ignoredEntries()}: a value that is not a JSON object or does not
   * convert, or one without node, address or state, whose address is not its node's and device's,
   * or with a negative device index, generation or load.
   */
  static Future<List<DeviceInfo>> list(Vertx vertx) {
    ClusterWatch watch = CudaRuntime.of(vertx).clusterWatch();
    return watch.checkPolicyUnlessUnanswered().compose(v -> ClusterMaps.<String, JsonObject, List<JsonObject>>call(vertx,
      Addresses.REGISTRY_MAP, AsyncMap::values)).map(values -> {
      List<DeviceInfo> devices = new ArrayList<>();
      for (Object v : (List<?>) values) { // as Object: a value of another type must not reach a cast
        DeviceInfo d = valid(v);
        if (d == null) {
          RegistryWatch.IGNORED.incrementAndGet();
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
  static long ignoredEntries() {
    return RegistryWatch.IGNORED.get();
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
  static Future<DeviceInfo> leastLoaded(Vertx vertx) {
    return choose(vertx, PlacementPolicy.leastLoaded());
  }

  /**
   * The ready device {@code policy} picks ({@link PlacementPolicy}); CONTEXT_LOST if there is none
   * or none suits it, or the policy's own failure.
   */
  @GenIgnore(GenIgnore.PERMITTED_TYPE)
  static Future<DeviceInfo> choose(Vertx vertx, PlacementPolicy policy) {
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
   * device it has seen serving whose node leaves the cluster. Starts with the devices listed now
   * (not announced). Each event is judged with the device it names, as {@link DeviceClient#events}
   * does, and only for devices the registry lists: an event for any other asks for a new listing,
   * and a device listed for the first time is announced READY once it confirms. At most
   * {@link RegistryWatch#MAX_DEVICES} devices are followed; one confirmed gone is
   * forgotten. Events not valid or not delivered are counted in {@link #ignoredEntries()}.
   * Unregister the consumer to stop.
   */
  static MessageConsumer<DeviceEvent> watch(Vertx vertx, Handler<DeviceEvent> handler) {
    return RegistryWatch.start(vertx, handler);
  }

  /** Publishes (or refreshes) a device's entry; it expires after {@code ttlMillis}. */
  static Future<Void> put(Vertx vertx, DeviceInfo device, long ttlMillis) {
    return ClusterMaps.<String, JsonObject, Void>call(vertx, Addresses.REGISTRY_MAP,
      m -> m.put(device.getAddress(), device.toJson(), ttlMillis));
  }

  /** Removes a device's entry. */
  static Future<Void> remove(Vertx vertx, String address) {
    return ClusterMaps.<String, JsonObject, JsonObject>call(vertx, Addresses.REGISTRY_MAP, m -> m.remove(address))
      .mapEmpty();
  }
}
