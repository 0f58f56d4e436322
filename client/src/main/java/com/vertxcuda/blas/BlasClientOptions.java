package com.vertxcuda.blas;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/**
 * How a {@link BlasClient} sends its requests.
 *
 * <p>Coalescing (off by default): requests made before the client's next flush, that is within
 * the event-loop task that made them (or, from a thread outside Vert.x, until the flush gets to
 * run), travel as one {@link BlasBatch} of at most {@link #getMaxCoalesced()} requests, and each
 * future completes with its own outcome. It costs no waiting, saves a message per request, and on
 * the device the same-shaped small GEMMs of a batch run as one batched call.
 */
@DataObject
@JsonGen(publicConverter = false)
public class BlasClientOptions {

  /** Default: coalescing off. */
  public static final boolean DEFAULT_COALESCE = false;
  /** Default most requests per coalesced message: 512. */
  public static final int DEFAULT_MAX_COALESCED = 512;

  private boolean coalesce = DEFAULT_COALESCE;
  private int maxCoalesced = DEFAULT_MAX_COALESCED;

  public BlasClientOptions() {
  }

  public BlasClientOptions(JsonObject json) {
    this();
    BlasClientOptionsConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    BlasClientOptionsConverter.toJson(this, json);
    return json;
  }

  /** Whether requests are coalesced into {@link BlasBatch} messages. */
  public boolean isCoalesce() { return coalesce; }
  public BlasClientOptions setCoalesce(boolean coalesce) { this.coalesce = coalesce; return this; }

  /** Most requests one coalesced message carries (1 to {@link BlasBatch#MAX_REQUESTS}). */
  public int getMaxCoalesced() { return maxCoalesced; }
  public BlasClientOptions setMaxCoalesced(int maxCoalesced) {
    if (maxCoalesced < 1 || maxCoalesced > BlasBatch.MAX_REQUESTS) {
      throw new IllegalArgumentException("maxCoalesced must be in [1, " + BlasBatch.MAX_REQUESTS + "], got "
        + maxCoalesced);
    }
    this.maxCoalesced = maxCoalesced;
    return this;
  }
}
