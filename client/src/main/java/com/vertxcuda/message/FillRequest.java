package com.vertxcuda.message;

import com.vertxcuda.BufferHandle;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/**
 * Set every element of a buffer or view to one value. The value travels as the element's bit
 * pattern ({@link com.vertxcuda.DType#encode(double)}), so 64-bit integers stay exact.
 * Replied with the target handle.
 */
@DataObject
@JsonGen(publicConverter = false)
public class FillRequest {

  private BufferHandle handle;
  private long bits;

  public FillRequest() {
  }

  public FillRequest(BufferHandle handle, long bits) {
    this.handle = handle;
    this.bits = bits;
  }

  /**
   * Fill with {@code value} converted to the handle's dtype ({@link com.vertxcuda.DType#encode(double)}:
   * out-of-range values, NaN for integers, fractions and integers past 2^53 are refused).
   *
   * @throws IllegalArgumentException naming the dtype's range
   */
  public static FillRequest of(BufferHandle handle, double value) {
    return new FillRequest(handle, handle.dtype().encode(value));
  }

  /**
   * Fill with the integer {@code value}, exact for 64-bit integer dtypes ({@link com.vertxcuda.DType#encode(long)}).
   *
   * @throws IllegalArgumentException naming the dtype's range
   */
  public static FillRequest ofInteger(BufferHandle handle, long value) {
    return new FillRequest(handle, handle.dtype().encode(value));
  }

  public FillRequest(JsonObject json) {
    FillRequestConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    FillRequestConverter.toJson(this, json);
    return json;
  }

  /** The buffer or view written. */
  public BufferHandle getHandle() { return handle; }
  public FillRequest setHandle(BufferHandle handle) { this.handle = handle; return this; }

  /**
   * The element's bit pattern, in the low {@code dtype.size()} bytes (any pattern of those bytes,
   * e.g. a U64 at or above 2^63). The device refuses higher bits with BAD_REQUEST.
   */
  public long getBits() { return bits; }
  public FillRequest setBits(long bits) { this.bits = bits; return this; }
}
