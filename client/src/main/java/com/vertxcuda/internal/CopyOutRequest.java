package com.vertxcuda.internal;

import com.vertxcuda.BufferHandle;
import io.vertx.core.json.JsonObject;

/**
 * The source side of a copy between two devices whose contexts share a process (in-process
 * isolation, one backend): sent to the source's device, where it takes its place in the order and
 * copies {@code source} straight into {@code target} (peer to peer on cuda) once the target's
 * {@link CopyInRequest} of the same {@code transfer} holds the target. Replied with the target when
 * the copy has finished on the source's stream.
 */
public record CopyOutRequest(BufferHandle source, BufferHandle target, long transfer) {

  public CopyOutRequest(JsonObject json) {
    this(json.getJsonObject("source") == null ? null : new BufferHandle(json.getJsonObject("source")), json.getJsonObject("target") == null ? null : new BufferHandle(json.getJsonObject("target")),
      json.getLong("transfer", 0L));
  }

  public JsonObject toJson() {
    return new JsonObject().put("source", source == null ? null : source.toJson()).put("target", target == null ? null : target.toJson())
      .put("transfer", transfer);
  }
}
