package com.vertxcuda.message;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/** Ask a device to describe itself. Replied with {@link com.vertxcuda.DeviceInfo}. */
@DataObject
@JsonGen(publicConverter = false)
public class DescribeRequest {

  public DescribeRequest() {
  }

  public DescribeRequest(JsonObject json) {
    DescribeRequestConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    DescribeRequestConverter.toJson(this, json);
    return json;
  }
}
