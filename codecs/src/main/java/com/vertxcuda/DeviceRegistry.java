package com.vertxcuda;

import com.vertxcuda.message.DeviceInfo;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The cluster-wide list of devices with their load, kept in a shared async map (cluster-wide when
 * the event bus is clustered). Entries expire unless their device refreshes them.
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
    return map(vertx).compose(AsyncMap::values).map(values -> {
      List<DeviceInfo> devices = new ArrayList<>();
      for (Object v : (List<?>) values) { // as Object: a value of another type must not reach a cast
        DeviceInfo d = valid(v);
        if (d != null) {
          devices.add(d);
        } else {
          IGNORED.incrementAndGet();
        }
      }
      devices.sort(Comparator.comparing(DeviceInfo::getAddress));
      return devices;
    });
  }

  /**
   * How many registry entries {@link #list} (and so {@link #leastLoaded}) has left out as not valid,
   * in this JVM since it started, counted once per listing that met one.
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

  /** The ready device with the least load, or a failure with CONTEXT_LOST if there is none. */
  public static Future<DeviceInfo> leastLoaded(Vertx vertx) {
    return list(vertx).compose(devices -> devices.stream()
      .filter(d -> d.getState() == com.vertxcuda.message.DeviceState.READY)
      .min(Comparator.comparingLong(DeviceInfo::getLoad))
      .map(Future::succeededFuture)
      .orElseGet(() -> Future.failedFuture(new CudaException(FailureCode.CONTEXT_LOST, "no ready device is registered"))));
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
