package com.vertxcuda.internal;

import com.vertxcuda.BufferHandle;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;

/**
 * Bytes of a copy between devices for {@code view}, a range of its {@link CopyInRequest}'s target,
 * served outside the order (the copy holds its place). {@code data} null aborts the copy: its
 * target's place is given up and the copy fails. Replied with the view once written.
 */
public record CopyInChunk(BufferHandle view, long transfer, Buffer data) {

  public CopyInChunk(JsonObject json) {
    this(json.getJsonObject("view") == null ? null : new BufferHandle(json.getJsonObject("view")),
      json.getLong("transfer", 0L), json.getBuffer("data"));
  }

  public JsonObject toJson() {
    return new JsonObject().put("view", view == null ? null : view.toJson()).put("transfer", transfer)
      .put("data", data);
  }
}
