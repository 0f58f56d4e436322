package com.vertxcuda.message;

import com.vertxcuda.BufferHandle;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/**
 * Hand a whole buffer to the device: it stops belonging to the node that allocated it (so it is not
 * freed when that node leaves, nor counted against its quota). Replied with the handle.
 */
@DataObject
@JsonGen(publicConverter = false)
public class KeepRequest {

  private BufferHandle handle;

  public KeepRequest() {
  }

  public KeepRequest(BufferHandle handle) {
    this.handle = handle;
  }

  public KeepRequest(JsonObject json) {
    KeepRequestConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    KeepRequestConverter.toJson(this, json);
    return json;
  }

  public BufferHandle getHandle() { return handle; }
  public KeepRequest setHandle(BufferHandle handle) { this.handle = handle; return this; }
}
