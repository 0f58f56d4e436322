package com.vertxcuda.fft;

import com.vertxcuda.BufferHandle;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/** A finished FFT. */
@DataObject
@JsonGen(publicConverter = false)
public class FftReply {

  private BufferHandle output;
  private boolean planReused;

  public FftReply() {
  }

  public FftReply(BufferHandle output, boolean planReused) {
    this.output = output;
    this.planReused = planReused;
  }

  public FftReply(JsonObject json) {
    FftReplyConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    FftReplyConverter.toJson(this, json);
    return json;
  }

  /** The output buffer or view. */
  public BufferHandle getOutput() { return output; }
  public FftReply setOutput(BufferHandle output) { this.output = output; return this; }

  /**
   * Whether the plan came from the plan cache (false: it was made for this request, or for another
   * of its key while this one waited).
   */
  public boolean isPlanReused() { return planReused; }
  public FftReply setPlanReused(boolean planReused) { this.planReused = planReused; return this; }
}
