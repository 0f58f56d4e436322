package com.vertxcuda.message;

import com.vertxcuda.BufferHandle;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/**
 * Copy device to device, from one buffer or view into another of the same dtype and length.
 * Replied with the target handle.
 */
@DataObject
@JsonGen(publicConverter = false)
public class CopyRequest {

  private BufferHandle source;
  private BufferHandle target;

  public CopyRequest() {
  }

  public CopyRequest(BufferHandle source, BufferHandle target) {
    this.source = source;
    this.target = target;
  }

  public CopyRequest(JsonObject json) {
    CopyRequestConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    CopyRequestConverter.toJson(this, json);
    return json;
  }

  /** The buffer or view read. */
  public BufferHandle getSource() { return source; }
  public CopyRequest setSource(BufferHandle source) { this.source = source; return this; }

  /** The buffer or view written. */
  public BufferHandle getTarget() { return target; }
  public CopyRequest setTarget(BufferHandle target) { this.target = target; return this; }
}
