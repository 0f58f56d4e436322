package com.vertxcuda.message;

import com.vertxcuda.DType;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/** Allocate a buffer of {@code count} elements of {@code dtype}. Replied with a {@link com.vertxcuda.BufferHandle}. */
@DataObject
@JsonGen(publicConverter = false)
public class AllocRequest {

  /**
   * The longest {@link #getOwner() owner} a device takes, in characters (a node id is 36). The
   * device keeps the owner with the buffer, so a longer one is refused with BAD_REQUEST.
   */
  public static final int MAX_OWNER_LENGTH = 256;

  private DType dtype;
  private long count;
  private String owner;

  public AllocRequest() {
  }

  public AllocRequest(DType dtype, long count, String owner) {
    this.dtype = dtype;
    this.count = count;
    this.owner = owner;
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
   * The node that asks (recorded with the allocation for later reclamation); at most
   * {@link #MAX_OWNER_LENGTH} characters.
   */
  public String getOwner() { return owner; }
  public AllocRequest setOwner(String owner) { this.owner = owner; return this; }
}
