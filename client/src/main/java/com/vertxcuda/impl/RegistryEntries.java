package com.vertxcuda.impl;

import com.vertxcuda.Addresses;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.internal.ClusterMaps;
import com.vertxcuda.internal.ClusterWatch;
import com.vertxcuda.internal.CudaRuntime;
import com.vertxcuda.DeviceInfo;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** The registry's entries in the cluster's shared map: read, written and removed for {@link DeviceRegistry}. */
public final class RegistryEntries {

  private RegistryEntries() {
  }

  /** The registry's valid entries of current members, by address ({@link DeviceRegistry#list}). */
  public static Future<List<DeviceInfo>> list(Vertx vertx) {
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

  /** Publishes (or refreshes) a device's entry ({@link DeviceRegistry#put}). */
  public static Future<Void> put(Vertx vertx, DeviceInfo device, long ttlMillis) {
    return ClusterMaps.<String, JsonObject, Void>call(vertx, Addresses.REGISTRY_MAP,
      m -> m.put(device.getAddress(), device.toJson(), ttlMillis));
  }

  /** Removes a device's entry ({@link DeviceRegistry#remove}). */
  public static Future<Void> remove(Vertx vertx, String address) {
    return ClusterMaps.<String, JsonObject, JsonObject>call(vertx, Addresses.REGISTRY_MAP, m -> m.remove(address))
      .mapEmpty();
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
}
