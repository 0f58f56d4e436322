package com.vertxcuda;

import com.vertxcuda.impl.DeviceClientImpl;
import com.vertxcuda.message.DeviceEvent;
import com.vertxcuda.message.DeviceInfo;
import com.vertxcuda.message.DeviceStats;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageConsumer;

/**
 * A typed client for one device's memory, usable from any node of the event bus. Every method
 * returns a {@link Future} that fails with a {@link CudaException} carrying a {@link FailureCode}.
 *
 * <p>Device bytes are little-endian elements of the buffer's {@link DType} (use
 * {@code Buffer.appendFloatLE} and {@code getFloatLE}).
 */
public interface DeviceClient {

  /** A client for device 0 of this node. */
  static DeviceClient create(Vertx vertx) {
    return create(vertx, new DeviceClientOptions());
  }

  static DeviceClient create(Vertx vertx, DeviceClientOptions options) {
    return new DeviceClientImpl(vertx, options);
  }

  /** A client for a device found through {@link DeviceRegistry}. */
  static DeviceClient create(Vertx vertx, DeviceInfo device) {
    return create(vertx, new DeviceClientOptions().setNode(device.getNode()).setDevice(device.getDevice()));
  }

  /**
   * A client for the device {@code policy} picks among the cluster's ready devices
   * ({@link DeviceRegistry#choose}); fails with CONTEXT_LOST when there is none.
   */
  static Future<DeviceClient> create(Vertx vertx, PlacementPolicy policy) {
    return DeviceRegistry.choose(vertx, policy).map(d -> create(vertx, d));
  }

  /** The device's address. */
  String address();

  /**
   * Allocates {@code count} elements of {@code dtype}, owned by this node: the device frees it when
   * this node leaves the cluster (the device takes the owner from the event bus, not from the
   * request), and counts it against this node's quota, if the device has one.
   */
  Future<BufferHandle> alloc(DType dtype, long count);

  /**
   * Hands a buffer to the device: it no longer belongs to the node that allocated it, so it
   * outlives that node and is counted against no node's quota (for buffers meant for others). Free
   * it explicitly when done.
   */
  Future<BufferHandle> keep(BufferHandle buffer);

  /** Frees a buffer; its memory returns after every use already sent has completed. */
  Future<Void> free(BufferHandle buffer);

  /** Writes {@code data} into a buffer or view; the lengths must match. */
  Future<BufferHandle> upload(BufferHandle target, Buffer data);

  /** Reads a buffer or view. */
  Future<Buffer> download(BufferHandle source);

  /** Copies device to device; same dtype and length. */
  Future<BufferHandle> copy(BufferHandle source, BufferHandle target);

  /**
   * Sets every element of a buffer or view to {@code value}, converted to its dtype by
   * {@link DType#encode(double)}. Nothing is rounded into range: floating-point dtypes take NaN,
   * the infinities and finite values that stay finite in the dtype; integer dtypes take only
   * integral values in their range, at most 2^53 in magnitude (larger 64-bit values: use
   * {@link #fillInteger}). Any other value fails with BAD_REQUEST naming the dtype's range, and
   * nothing is sent.
   */
  Future<BufferHandle> fill(BufferHandle target, double value);

  /**
   * Sets every element to the integer {@code value}, exact for 64-bit types ({@link DType#encode(long)}):
   * a value outside the dtype's range (for U64: below 0) fails with BAD_REQUEST naming the range.
   */
  Future<BufferHandle> fillInteger(BufferHandle target, long value);

  /** The device's counters. */
  Future<DeviceStats> stats();

  /** What the device is and where it stands. */
  Future<DeviceInfo> describe();

  /**
   * Subscribes to the device's lifecycle events (generation changed, lost, ready). Anything else
   * on the events address never reaches {@code handler}: a body that is not a {@link DeviceEvent},
   * or one without a type, for another node or device, or with a negative or decreasing
   * generation. Such bodies are counted in {@link #ignoredEvents()}.
   */
  MessageConsumer<DeviceEvent> events(Handler<DeviceEvent> handler);

  /**
   * How many bodies on the device's events address this client's {@link #events} subscribers have
   * ignored as not valid events (once per subscriber that received one). Growing means someone
   * publishes on that address who should not.
   */
  long ignoredEvents();
}
