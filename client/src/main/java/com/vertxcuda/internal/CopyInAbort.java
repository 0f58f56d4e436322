package com.vertxcuda.internal;

import com.vertxcuda.BufferHandle;
import io.vertx.core.json.JsonObject;

/**
 * Gives up the place a {@link CopyInRequest} of the same {@code transfer} holds on {@code target}:
 * sent by the client when the copy's source refused its {@link CopyOutRequest}, so later uses of the
 * target go on at once instead of at the copy's deadline, and the copy fails. Served beside the
 * order; one that arrives before its copy's start waits for it. Replied with the target.
 */
public record CopyInAbort(BufferHandle target, long transfer) {

  public CopyInAbort(JsonObject json) {
    this(json.getJsonObject("target") == null ? null : new BufferHandle(json.getJsonObject("target")),
      json.getLong("transfer", 0L));
  }

  public JsonObject toJson() {
    return new JsonObject().put("target", target == null ? null : target.toJson()).put("transfer", transfer);
  }
}
