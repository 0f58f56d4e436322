package com.vertxcuda;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.core.json.JsonObject;

import java.security.SecureRandom;
import java.util.Objects;

/**
 * An immutable reference to device memory: which node, device and context generation issued it,
 * the buffer id, the element type and count, and an unguessable 128-bit token. A handle can name a
 * view (a range of elements) of its buffer; views are handles too.
 *
 * <p>A handle is only a claim: the device validates every use (unknown or freed id, stale
 * generation, wrong token, wrong dtype, range out of bounds) and answers each with its own
 * {@link FailureCode}.
 */
@DataObject
public final class BufferHandle {

  private static final SecureRandom RANDOM = new SecureRandom();

  private final String node;
  private final int device;
  private final long generation;
  private final long id;
  private final DType dtype;
  private final long count;
  private final long tokenHigh;
  private final long tokenLow;
  private final long offset;
  private final long length;

  public BufferHandle(String node, int device, long generation, long id, DType dtype, long count,
                      long tokenHigh, long tokenLow, long offset, long length) {
    this.node = Objects.requireNonNull(node, "node");
    this.device = device;
    this.generation = generation;
    this.id = id;
    this.dtype = Objects.requireNonNull(dtype, "dtype");
    this.count = count;
    this.tokenHigh = tokenHigh;
    this.tokenLow = tokenLow;
    this.offset = offset;
    this.length = length;
  }

  /** A handle to a whole new buffer with a fresh random token. */
  public static BufferHandle issue(String node, int device, long generation, long id, DType dtype, long count) {
    return new BufferHandle(node, device, generation, id, dtype, count,
      RANDOM.nextLong(), RANDOM.nextLong(), 0, count);
  }

  public BufferHandle(JsonObject json) {
    this(json.getString("node"), json.getInteger("device", 0), json.getLong("generation", 0L),
      json.getLong("id", 0L), DType.valueOf(json.getString("dtype")), json.getLong("count", 0L),
      Long.parseUnsignedLong(json.getString("token").substring(0, 16), 16),
      Long.parseUnsignedLong(json.getString("token").substring(16), 16),
      json.getLong("offset", 0L), json.getLong("length", json.getLong("count", 0L)));
  }

  public JsonObject toJson() {
    return new JsonObject()
      .put("node", node).put("device", device).put("generation", generation).put("id", id)
      .put("dtype", dtype.name()).put("count", count)
      .put("token", String.format("%016x%016x", tokenHigh, tokenLow))
      .put("offset", offset).put("length", length);
  }

  /**
   * A view of {@code length} elements starting {@code offset} elements into this handle's range.
   * Bounds are checked here and again on the device.
   */
  public BufferHandle view(long offset, long length) {
    if (offset < 0 || length < 0 || offset > this.length || length > this.length - offset) {
      throw new IllegalArgumentException("view [" + offset + ", +" + length + ") is outside [0, "
        + this.length + ")");
    }
    return new BufferHandle(node, device, generation, id, dtype, count, tokenHigh, tokenLow,
      this.offset + offset, length);
  }

  /** The whole buffer this handle (or view) belongs to. */
  public BufferHandle whole() {
    return new BufferHandle(node, device, generation, id, dtype, count, tokenHigh, tokenLow, 0, count);
  }

  public String node() { return node; }
  public int device() { return device; }
  public long generation() { return generation; }
  public long id() { return id; }
  public DType dtype() { return dtype; }
  /** Elements in the whole buffer. */
  public long count() { return count; }
  public long tokenHigh() { return tokenHigh; }
  public long tokenLow() { return tokenLow; }
  /** First element of the range this handle names. */
  public long offset() { return offset; }
  /** Elements in the range this handle names. */
  public long length() { return length; }
  public boolean isView() { return offset != 0 || length != count; }
  public long byteOffset() { return dtype.bytes(offset); }
  public long byteLength() { return dtype.bytes(length); }

  @Override
  public boolean equals(Object o) {
    if (this == o) return true;
    if (!(o instanceof BufferHandle)) return false;
    BufferHandle h = (BufferHandle) o;
    return device == h.device && generation == h.generation && id == h.id && count == h.count
      && tokenHigh == h.tokenHigh && tokenLow == h.tokenLow && offset == h.offset
      && length == h.length && dtype == h.dtype && node.equals(h.node);
  }

  @Override
  public int hashCode() {
    return Objects.hash(node, device, generation, id, dtype, count, tokenHigh, tokenLow, offset, length);
  }

  @Override
  public String toString() {
    return "BufferHandle[" + node + "/" + device + " g" + generation + " #" + id + " " + dtype
      + "[" + offset + ", +" + length + ") of " + count + "]";
  }
}
