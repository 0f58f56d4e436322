package com.vertxcuda.message;

import com.vertxcuda.BufferHandle;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;

/**
 * Copy a buffer or view into a transfer buffer the device lent ({@code DeviceVerticle.allocateTransferBuffer}):
 * a step of a recorded pipeline ({@link com.vertxcuda.PipelineRecorder#download}), whose every
 * replay writes the source's bytes into that memory. The transfer buffer's length must equal the
 * source's byte length. Sent on its own it is refused (a download answers its bytes instead).
 */
@DataObject
@JsonGen(publicConverter = false)
public class DownloadIntoRequest {

  private BufferHandle handle;
  private Buffer data;

  public DownloadIntoRequest() {
  }

  public DownloadIntoRequest(BufferHandle handle, Buffer data) {
    this.handle = handle;
    this.data = data;
  }

  public DownloadIntoRequest(JsonObject json) {
    DownloadIntoRequestConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    DownloadIntoRequestConverter.toJson(this, json);
    return json;
  }

  /** The buffer or view to read. */
  public BufferHandle getHandle() { return handle; }
  public DownloadIntoRequest setHandle(BufferHandle handle) { this.handle = handle; return this; }

  /** The transfer buffer the bytes land in, little-endian elements of the handle's dtype. */
  public Buffer getData() { return data; }
  public DownloadIntoRequest setData(Buffer data) { this.data = data; return this; }
}
