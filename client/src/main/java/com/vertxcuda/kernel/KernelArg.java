package com.vertxcuda.kernel;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/**
 * One argument of a kernel launch: a buffer (or view) passed as a device pointer to its first
 * element, with how the kernel uses it; or a scalar of a {@link DType}, passed by value.
 */
@DataObject
@JsonGen(publicConverter = false)
public class KernelArg {

  private BufferHandle buffer;
  private Access access;
  private DType dtype;
  private long bits;

  public KernelArg() {
  }

  public KernelArg(JsonObject json) {
    KernelArgConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    KernelArgConverter.toJson(this, json);
    return json;
  }

  /** A buffer the kernel reads. */
  public static KernelArg in(BufferHandle buffer) {
    return new KernelArg().setBuffer(buffer).setAccess(Access.READ);
  }

  /** A buffer the kernel writes. */
  public static KernelArg out(BufferHandle buffer) {
    return new KernelArg().setBuffer(buffer).setAccess(Access.WRITE);
  }

  /** A buffer the kernel reads and writes. */
  public static KernelArg inOut(BufferHandle buffer) {
    return new KernelArg().setBuffer(buffer).setAccess(Access.READ_WRITE);
  }

  /**
   * A scalar of {@code dtype} holding {@code value}, under the rules of {@link DType#encode(double)}
   * (the same as a fill's): out of range, NaN for integers, fractions and integers past 2^53 are refused.
   *
   * @throws IllegalArgumentException naming the dtype's range
   */
  public static KernelArg scalar(DType dtype, double value) {
    return new KernelArg().setDtype(dtype).setBits(dtype.encode(value));
  }

  /**
   * An integer scalar of {@code dtype} (exact for 64-bit types), range-checked by {@link DType#encode(long)}.
   *
   * @throws IllegalArgumentException naming the dtype's range
   */
  public static KernelArg integer(DType dtype, long value) {
    return new KernelArg().setDtype(dtype).setBits(dtype.encode(value));
  }

  /** The buffer or view (null for a scalar). */
  public BufferHandle getBuffer() { return buffer; }
  public KernelArg setBuffer(BufferHandle buffer) { this.buffer = buffer; return this; }

  /** How the kernel uses the buffer. */
  public Access getAccess() { return access; }
  public KernelArg setAccess(Access access) { this.access = access; return this; }

  /** The scalar's type (null for a buffer). */
  public DType getDtype() { return dtype; }
  public KernelArg setDtype(DType dtype) { this.dtype = dtype; return this; }

  /** The scalar's bit pattern in the low {@code dtype.size()} bytes. */
  public long getBits() { return bits; }
  public KernelArg setBits(long bits) { this.bits = bits; return this; }
}
