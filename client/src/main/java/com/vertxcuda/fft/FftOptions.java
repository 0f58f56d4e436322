package com.vertxcuda.fft;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/** Settings of a device's FFT verticle, given as {@code DeviceOptions.libraryOptions["fft"]}. */
@DataObject
@JsonGen(publicConverter = false)
public class FftOptions {

  /** Default plan cache size: 16 plans. */
  public static final int DEFAULT_PLAN_CACHE_SIZE = 16;

  /** Default plan cache budget: 0, chosen from the device (see {@link #getPlanCacheBytes()}). */
  public static final long DEFAULT_PLAN_CACHE_BYTES = 0;

  private int planCacheSize = DEFAULT_PLAN_CACHE_SIZE;
  private long planCacheBytes = DEFAULT_PLAN_CACHE_BYTES;

  public FftOptions() {
  }

  public FftOptions(FftOptions other) {
    this(other.toJson());
  }

  public FftOptions(JsonObject json) {
    this();
    FftOptionsConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    FftOptionsConverter.toJson(this, json);
    return json;
  }

  /** Plans kept for reuse, least recently used evicted first (at least 1); each cuFFT plan holds a work area. */
  public int getPlanCacheSize() { return planCacheSize; }
  public FftOptions setPlanCacheSize(int planCacheSize) { this.planCacheSize = planCacheSize; return this; }

  /**
   * Most bytes the cached plans may hold (cuFFT: the work areas cuFFT reports; host: the twiddle
   * and scratch arrays of the JTransforms plans); past it the least recently used plans are
   * released (a plan still in use once its work completes). 0 (the default) picks an eighth of the
   * device's memory, on the host backend at most a quarter of the JVM's heap, where its plans live.
   * A plan larger than the budget is made, used by its request and released: the transform runs,
   * uncached. Every plan, cached or not, also counts against {@code DeviceOptions.memoryLimit}
   * (shown in {@code DeviceStats.libraryBytes["fft"]}).
   */
  public long getPlanCacheBytes() { return planCacheBytes; }
  public FftOptions setPlanCacheBytes(long planCacheBytes) { this.planCacheBytes = planCacheBytes; return this; }
}
