package com.vertxcuda.blas;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/**
 * Settings of a device's BLAS verticle, given as {@code DeviceOptions.libraryOptions["blas"]}.
 *
 * <p>Dynamic batching: GEMM requests of one shape (dtype, transposes, m, n, k, leading dimensions,
 * alpha, beta, TF32) that arrive within {@link #getBatchWindow()} of the first run as one batched
 * device call, and each is answered on its own with the result it would have had alone. Off by
 * default.
 */
@DataObject
@JsonGen(publicConverter = false)
public class BlasOptions {

  /** Default batching window: 0 µs, batching off. */
  public static final long DEFAULT_BATCH_WINDOW = 0;
  /** Default most requests per batch: 64. */
  public static final int DEFAULT_MAX_BATCH_SIZE = 64;
  /** Default largest m, n or k a batched GEMM may have: 256. */
  public static final int DEFAULT_MAX_BATCHED_DIMENSION = 256;

  private long batchWindow = DEFAULT_BATCH_WINDOW;
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

  /**
   * Longest window taken, in microseconds (100 ms): a held GEMM keeps later requests for its buffers
   * waiting, and the context gives up on an earlier request after {@code RequestSequencer}'s 2 s.
   */
  public static final long MAX_BATCH_WINDOW = 100_000;

  /**
   * How long the first GEMM of a batch waits for same-shaped ones, in microseconds; 0 turns batching
   * off. Windows past {@link #MAX_BATCH_WINDOW} are taken as that.
   */
  public long getBatchWindow() { return batchWindow; }
  public BlasOptions setBatchWindow(long batchWindow) { this.batchWindow = batchWindow; return this; }

  /** Most GEMM requests in one batch; a full batch runs at once. */
  public int getMaxBatchSize() { return maxBatchSize; }
  public BlasOptions setMaxBatchSize(int maxBatchSize) { this.maxBatchSize = maxBatchSize; return this; }

  /** Largest m, n or k of a GEMM that may be batched; larger ones run alone. */
  public int getMaxBatchedDimension() { return maxBatchedDimension; }
  public BlasOptions setMaxBatchedDimension(int v) { this.maxBatchedDimension = v; return this; }
}
