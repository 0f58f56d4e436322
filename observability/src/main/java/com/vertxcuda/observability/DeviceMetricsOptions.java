package com.vertxcuda.observability;

import io.vertx.core.json.JsonObject;

/** How {@link DeviceMetrics} watches the cluster's devices. */
public class DeviceMetricsOptions {

  /** Default time between two polls of every device's counters: 5000 ms. */
  public static final long DEFAULT_POLL_INTERVAL = 5_000;

  private long pollInterval = DEFAULT_POLL_INTERVAL;

  public DeviceMetricsOptions() {
  }

  public DeviceMetricsOptions(DeviceMetricsOptions other) {
    this.pollInterval = other.pollInterval;
  }

  public DeviceMetricsOptions(JsonObject json) {
    this.pollInterval = json.getLong("pollInterval", DEFAULT_POLL_INTERVAL);
  }

  public JsonObject toJson() {
    return new JsonObject().put("pollInterval", pollInterval);
  }

  /** Time between two polls of the device list and of each device's counters, in ms (gauges are this stale at most). */
  public long getPollInterval() { return pollInterval; }
  public DeviceMetricsOptions setPollInterval(long v) {
    if (v < 1) {
      throw new IllegalArgumentException("pollInterval must be at least 1 ms, not " + v);
    }
    this.pollInterval = v;
    return this;
  }
}
