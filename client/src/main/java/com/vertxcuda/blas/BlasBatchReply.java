package com.vertxcuda.blas;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/** The answer to a {@link BlasBatch}: one outcome per request, in the batch's order. */
@DataObject
@JsonGen(publicConverter = false)
public class BlasBatchReply {

  private List<BlasOutcome> outcomes = new ArrayList<>();

  public BlasBatchReply() {
  }

  public BlasBatchReply(List<BlasOutcome> outcomes) {
    this.outcomes = outcomes;
  }

  public BlasBatchReply(JsonObject json) {
    BlasBatchReplyConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    BlasBatchReplyConverter.toJson(this, json);
    return json;
  }

  public List<BlasOutcome> getOutcomes() { return outcomes; }
  public BlasBatchReply setOutcomes(List<BlasOutcome> outcomes) { this.outcomes = outcomes; return this; }
}
