package com.vertxcuda.message;

import com.vertxcuda.PipelineHandle;
import io.vertx.core.json.JsonObject;

/**
 * Replay a recorded pipeline: ordered like any request (after the requests sent before it on the
 * same context, before those sent after), answered with the pipeline's handle once the device has
 * finished every step.
 */
public class ReplayRequest {

  private final PipelineHandle pipeline;

  public ReplayRequest(PipelineHandle pipeline) {
    this.pipeline = pipeline;
  }

  public ReplayRequest(JsonObject json) {
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
