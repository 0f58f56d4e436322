package com.vertxcuda;

import com.vertxcuda.message.DeviceInfo;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The cluster-wide list of devices with their load, kept in a shared async map (cluster-wide when
 * the event bus is clustered). Entries expire unless their device refreshes them.
 */
public final class DeviceRegistry {

  private DeviceRegistry() {
  }

  /** Every device currently registered, on any node. */
  public static Future<List<DeviceInfo>> list(Vertx vertx) {
    return map(vertx).compose(AsyncMap::values).map(values -> {
      List<DeviceInfo> devices = new ArrayList<>();
      for (JsonObject v : values) {
        devices.add(new DeviceInfo(v));
      }
      devices.sort(Comparator.comparing(DeviceInfo::getAddress));
      return devices;
    });
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
