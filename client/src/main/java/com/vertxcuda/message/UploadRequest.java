package com.vertxcuda.message;

import com.vertxcuda.BufferHandle;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;

/**
 * Copy bytes from the host into a buffer or view. The data's length must equal the target's byte
 * length. Replied with the target handle.
 */
@DataObject
@JsonGen(publicConverter = false)
public class UploadRequest {

  private BufferHandle handle;
  private Buffer data;

  public UploadRequest() {
  }

  public UploadRequest(BufferHandle handle, Buffer data) {
    this.handle = handle;
    this.data = data;
  }

  public UploadRequest(JsonObject json) {
    UploadRequestConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    UploadRequestConverter.toJson(this, json);
    return json;
  }

  /** The buffer or view to write. */
  public BufferHandle getHandle() { return handle; }
  public UploadRequest setHandle(BufferHandle handle) { this.handle = handle; return this; }

  /** The bytes, little-endian elements of the target's dtype. */
  public Buffer getData() { return data; }
  public UploadRequest setData(Buffer data) { this.data = data; return this; }
}
