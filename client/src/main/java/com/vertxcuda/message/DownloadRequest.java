package com.vertxcuda.message;

import com.vertxcuda.BufferHandle;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/** Copy a buffer or view from the device into a Buffer. Replied with a {@link DownloadReply}. */
@DataObject
@JsonGen(publicConverter = false)
public class DownloadRequest {

  private BufferHandle handle;

  public DownloadRequest() {
  }

  public DownloadRequest(BufferHandle handle) {
    this.handle = handle;
  }

  public DownloadRequest(JsonObject json) {
    DownloadRequestConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    DownloadRequestConverter.toJson(this, json);
    return json;
  }

  /** The buffer or view to read. */
  public BufferHandle getHandle() { return handle; }
  public DownloadRequest setHandle(BufferHandle handle) { this.handle = handle; return this; }
}
