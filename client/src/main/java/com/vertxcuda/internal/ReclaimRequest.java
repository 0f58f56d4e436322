package com.vertxcuda.internal;

import io.vertx.core.json.JsonObject;

/**
 * The device's own request to its context: free every buffer and module that {@code owner} (a node
 * that left the cluster) still holds, once the uses already sent have completed. Never taken from
 * the event bus: a device refuses it there.
 */
public record ReclaimRequest(String owner) {

  public ReclaimRequest(JsonObject json) {
    this(json.getString("owner"));
  }

  public JsonObject toJson() {
    return new JsonObject().put("owner", owner);
  }
}
