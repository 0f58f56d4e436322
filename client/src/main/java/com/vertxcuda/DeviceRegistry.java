package com.vertxcuda;

import com.vertxcuda.impl.RegistryEntries;
import com.vertxcuda.impl.RegistryWatch;
import io.vertx.codegen.annotations.GenIgnore;
import io.vertx.codegen.annotations.VertxGen;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;

import java.util.ArrayList;
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
    return RegistryEntries.list(vertx);
  }

  /**
   * How many registry entries {@link #list} (and so {@link #leastLoaded}) has left out as not valid,
   * and events {@link #watch} has dropped as not valid or not confirmed by their device, in this
   * JVM since it started, counted once per listing or watcher that met one.
   */
  static long ignoredEntries() {
    return RegistryWatch.IGNORED.get();
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
   * (not announced, but for one whose READY comes while that first listing is out). Each event is
   * judged with the device it names, as {@link DeviceClient#events} does, and only for devices the registry lists: an event for any other asks for a new listing,
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
    return RegistryEntries.put(vertx, device, ttlMillis);
  }

  /** Removes a device's entry. */
  static Future<Void> remove(Vertx vertx, String address) {
    return RegistryEntries.remove(vertx, address);
  }
}
