package com.vertxcuda.message;

import com.vertxcuda.BufferHandle;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;

/** The bytes read from a buffer or view. */
@DataObject
@JsonGen(publicConverter = false)
public class DownloadReply {

  private BufferHandle handle;
  private Buffer data;

  public DownloadReply() {
  }

  public DownloadReply(BufferHandle handle, Buffer data) {
    this.handle = handle;
    this.data = data;
  }

  public DownloadReply(JsonObject json) {
    DownloadReplyConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    DownloadReplyConverter.toJson(this, json);
    return json;
  }

  /** The buffer or view that was read. */
  public BufferHandle getHandle() { return handle; }
  public DownloadReply setHandle(BufferHandle handle) { this.handle = handle; return this; }

  /** The bytes, little-endian elements of the handle's dtype. */
  public Buffer getData() { return data; }
  public DownloadReply setData(Buffer data) { this.data = data; return this; }
}
