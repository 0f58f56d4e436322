package com.vertxcuda.message;

import com.vertxcuda.BufferHandle;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/** Free a buffer (a view frees nothing: name the whole buffer). Replied with the freed handle; memory returns once every recorded use has completed. */
@DataObject
@JsonGen(publicConverter = false)
public class FreeRequest {

  private BufferHandle handle;

  public FreeRequest() {
  }

  public FreeRequest(BufferHandle handle) {
    this.handle = handle;
  }

  public FreeRequest(JsonObject json) {
    FreeRequestConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    FreeRequestConverter.toJson(this, json);
    return json;
  }

  /** The buffer to free. */
  public BufferHandle getHandle() { return handle; }
  public FreeRequest setHandle(BufferHandle handle) { this.handle = handle; return this; }
}
