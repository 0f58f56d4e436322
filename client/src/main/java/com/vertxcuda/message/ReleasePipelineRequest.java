package com.vertxcuda.message;

import com.vertxcuda.PipelineHandle;
import io.vertx.core.json.JsonObject;

/**
 * Release a recorded pipeline: its graph and what it holds go once the replays already sent are
 * done. Later replays of it fail with NOT_FOUND. Replied with the pipeline handle.
 */
public class ReleasePipelineRequest {

  private final PipelineHandle pipeline;

  public ReleasePipelineRequest(PipelineHandle pipeline) {
    this.pipeline = pipeline;
  }

  public ReleasePipelineRequest(JsonObject json) {
    JsonObject p = json.getJsonObject("pipeline");
    this.pipeline = p == null ? null : new PipelineHandle(p);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    if (pipeline != null) {
      json.put("pipeline", pipeline.toJson());
    }
    return json;
  }

  public PipelineHandle getPipeline() { return pipeline; }
}
