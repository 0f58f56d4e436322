package com.vertxcuda.blas;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/**
 * Settings of a device's BLAS verticle, given as {@code DeviceOptions.libraryOptions["blas"]}.
 *
 * <p>Batching of what is queued: small GEMM requests of one shape (dtype, transposes, m, n, k,
 * leading dimensions, alpha, beta, TF32) that the device serves one after another run as one batched
 * device call, and each is answered on its own with the result it would have had alone. Nothing
 * waits for more to come: a group goes to the GPU as soon as the next request cannot join it or the
 * device has nothing else queued, so an idle device adds no latency. {@link #setMaxBatchSize} below
 * 2 turns it off.
 */
@DataObject
@JsonGen(publicConverter = false)
public class BlasOptions {

  /**
   * Default most requests per batch: 512, one batched call on the cuda engine (its pointer arrays'
   * chunk). A deep queue of small GEMMs (a coalescing client, several event loops) pays the per-call
   * work — the pointer arrays' copy, the batched launch, the events that order and release it — once
   * per batch, so a smaller batch caps its throughput however many loops feed it; a larger one holds
   * more requests behind one answer.
   */
  public static final int DEFAULT_MAX_BATCH_SIZE = 512;
  /** Default largest m, n or k a batched GEMM may have: 256. */
  public static final int DEFAULT_MAX_BATCHED_DIMENSION = 256;

  private int maxBatchSize = DEFAULT_MAX_BATCH_SIZE;
  private int maxBatchedDimension = DEFAULT_MAX_BATCHED_DIMENSION;

  public BlasOptions() {
  }

  public BlasOptions(BlasOptions other) {
    this(other.toJson());
  }

  public BlasOptions(JsonObject json) {
    this();
    BlasOptionsConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    BlasOptionsConverter.toJson(this, json);
    return json;
  }

  /** Most GEMM requests in one batch; a full batch runs at once; below 2, GEMMs run alone. */
  public int getMaxBatchSize() { return maxBatchSize; }
  public BlasOptions setMaxBatchSize(int maxBatchSize) { this.maxBatchSize = maxBatchSize; return this; }

  /** Largest m, n or k of a GEMM that may be batched; larger ones run alone. */
  public int getMaxBatchedDimension() { return maxBatchedDimension; }
  public BlasOptions setMaxBatchedDimension(int v) { this.maxBatchedDimension = v; return this; }
}
