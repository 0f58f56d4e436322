package com.vertxcuda.blas;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/**
 * Several {@link BlasRequest}s in one message, answered by one {@link BlasBatchReply} with an
 * outcome per request in the same order. Each request is checked, ordered and answered as if it had
 * been sent alone, in list order; same-shaped small GEMMs among them run as one batched device call.
 * A coalescing {@link BlasClient} sends these for its callers (see {@link BlasClientOptions}).
 */
@DataObject
@JsonGen(publicConverter = false)
public class BlasBatch {

  /** Most requests one batch may carry. */
  public static final int MAX_REQUESTS = 65_536;

  private List<BlasRequest> requests = new ArrayList<>();

  public BlasBatch() {
  }

  public BlasBatch(List<BlasRequest> requests) {
    this.requests = requests;
  }

  public BlasBatch(JsonObject json) {
    BlasBatchConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    BlasBatchConverter.toJson(this, json);
    return json;
  }

  /** The requests, in the order they are served. */
  public List<BlasRequest> getRequests() { return requests; }
  public BlasBatch setRequests(List<BlasRequest> requests) { this.requests = requests; return this; }
}
