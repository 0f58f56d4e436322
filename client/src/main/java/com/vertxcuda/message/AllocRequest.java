package com.vertxcuda.message;

import com.vertxcuda.DType;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/**
 * Allocate a buffer of {@code count} elements of {@code dtype}. Replied with a {@link com.vertxcuda.BufferHandle}.
 * The buffer belongs to the node that sent the request, as the event bus says (see {@link KeepRequest}).
 */
@DataObject
@JsonGen(publicConverter = false)
public class AllocRequest {

  private DType dtype;
  private long count;
  private boolean uninitialized;

  public AllocRequest() {
  }

  public AllocRequest(DType dtype, long count) {
    this.dtype = dtype;
    this.count = count;
  }

  public AllocRequest(JsonObject json) {
    AllocRequestConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    AllocRequestConverter.toJson(this, json);
    return json;
  }

  /** Element type of the new buffer. */
  public DType getDtype() { return dtype; }
  public AllocRequest setDtype(DType dtype) { this.dtype = dtype; return this; }

  /** Number of elements (not bytes). */
  public long getCount() { return count; }
  public AllocRequest setCount(long count) { this.count = count; return this; }

  /**
   * Whether the buffer may keep whatever bytes its memory held (false by default: it reads as zeros
   * until written). For buffers the caller overwrites whole before reading.
   */
  public boolean isUninitialized() { return uninitialized; }
  public AllocRequest setUninitialized(boolean uninitialized) { this.uninitialized = uninitialized; return this; }
}
