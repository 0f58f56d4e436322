package com.vertxcuda.internal;

import com.vertxcuda.BufferHandle;
import io.vertx.core.json.JsonObject;

/**
 * The target side of a direct copy between two devices whose contexts share a process: sent to the
 * target's device, where it takes its place in the order and holds {@code target} until the source's
 * context, serving the {@link CopyOutRequest} of the same {@code transfer} (the copy's random id),
 * has queued its write straight into it (peer to peer on cuda). Later requests that touch the target
 * wait for that write. Replied with the target once written; failed if the copy is aborted
 * ({@link CopyInAbort}), the context goes, or its deadline passes first. Sent by
 * {@code DeviceClient.copy}; a staged copy does not use it (its bytes are uploads of the target's views).
 */
public record CopyInRequest(BufferHandle source, BufferHandle target, long transfer) {

  public CopyInRequest(JsonObject json) {
    this(json.getJsonObject("source") == null ? null : new BufferHandle(json.getJsonObject("source")), json.getJsonObject("target") == null ? null : new BufferHandle(json.getJsonObject("target")),
      json.getLong("transfer", 0L));
  }

  public JsonObject toJson() {
    return new JsonObject().put("source", source == null ? null : source.toJson()).put("target", target == null ? null : target.toJson())
      .put("transfer", transfer);
  }
}
