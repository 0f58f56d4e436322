package com.vertxcuda.internal;

import com.vertxcuda.BufferHandle;
import io.vertx.core.json.JsonObject;

/**
 * The start of a copy into {@code target} from {@code source}, a buffer or view on another device
 * (of this node or another), sent to the target's device where the copy takes its place in the
 * order: later requests that touch {@code target} wait until every byte has arrived in
 * {@link CopyInChunk}s of the same {@code transfer} (the copy's random id). Replied with the target
 * once the last chunk is written; failed if the copy is aborted, the context goes, or its deadline
 * passes first. Sent by {@code DeviceClient.copy}, which reads the source. With {@code peer}, no
 * chunks come: the source's context, in the same process, copies straight into the target when its
 * {@link CopyOutRequest} is served.
 */
public record CopyInRequest(BufferHandle source, BufferHandle target, long transfer, boolean peer) {

  public CopyInRequest(JsonObject json) {
    this(json.getJsonObject("source") == null ? null : new BufferHandle(json.getJsonObject("source")), json.getJsonObject("target") == null ? null : new BufferHandle(json.getJsonObject("target")),
      json.getLong("transfer", 0L), json.getBoolean("peer", false));
  }

  public JsonObject toJson() {
    return new JsonObject().put("source", source == null ? null : source.toJson()).put("target", target == null ? null : target.toJson())
      .put("transfer", transfer).put("peer", peer);
  }
}
