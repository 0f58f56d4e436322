package com.vertxcuda.message;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/** Ask a device for its counters. Replied with {@link com.vertxcuda.DeviceStats}. */
@DataObject
@JsonGen(publicConverter = false)
public class StatsRequest {

  public StatsRequest() {
  }

  public StatsRequest(JsonObject json) {
    StatsRequestConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    StatsRequestConverter.toJson(this, json);
    return json;
  }
}
