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

  private int planCacheSize = DEFAULT_PLAN_CACHE_SIZE;

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
}
