package com.vertxcuda;

import com.vertxcuda.impl.DeviceClientImpl;
import io.vertx.codegen.annotations.GenIgnore;
import io.vertx.codegen.annotations.VertxGen;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageConsumer;

import java.util.Objects;
import java.util.function.Function;

/**
 * A typed client for one device's memory, usable from any node of the event bus. Every method
 * returns a {@link Future} that fails with a {@link CudaException} carrying a {@link FailureCode}.
 *
 * <p>Device bytes are little-endian elements of the buffer's {@link DType} (use
 * {@code Buffer.appendFloatLE} and {@code getFloatLE}).
 */
@VertxGen
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
  @GenIgnore(GenIgnore.PERMITTED_TYPE)
  static Future<DeviceClient> create(Vertx vertx, PlacementPolicy policy) {
    return DeviceRegistry.choose(vertx, policy).map(d -> create(vertx, d));
  }

  /** The device's address. */
  String address();

  /**
   * Allocates {@code count} elements of {@code dtype}, owned by this node: the device frees it when
   * this node leaves the cluster (the device takes the owner from the event bus, not from the
   * request), and counts it against this node's quota, if the device has one. The buffer reads as
   * zeros until written.
   */
  Future<BufferHandle> alloc(DType dtype, long count);

  /**
   * Like {@link #alloc}, but the contents are undefined until written: they may be bytes another
   * owner freed. For buffers the caller overwrites whole before reading (an upload's target, a
   * GEMM's output with beta 0); it saves the device's zeroing pass over the buffer.
   */
  Future<BufferHandle> allocUninitialized(DType dtype, long count);

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

  /**
   * Reads a buffer or view. From a device in this JVM the buffer is usually memory the device lends
   * (give it back early with {@code DeviceVerticle.releaseTransferBuffer}); a range larger than the
   * device may lend at once (its {@code transferBudget}, and three quarters of its shared region in process
   * isolation) comes back in pieces, through lent memory, into host memory the device lends where its
   * transfer budget has room for the whole, else into heap arrays of about 32 MiB, each made on a copy
   * thread as the pieces land, and the Buffer is one composite over them. From a device on another node, a
   * range past 1 MiB comes over the node's side channel into such arrays too. A composite has no single
   * backing array; reads, slices and uploads of it work as for any Buffer. Never one new heap array of
   * the whole range: the JVM zeroes a new array in one piece without reaching a safepoint, so every
   * thread that reaches one meanwhile (the caller's loop too) would wait for it.
   */
  Future<Buffer> download(BufferHandle source);

  /**
   * Writes an F32 or C64 buffer or view from {@code data}, which must hold exactly its length (two
   * values per C64 element: real, imaginary). The Java type must match the dtype, here and in the
   * other array and NIO overloads: {@code float} F32 or C64, {@code double} F64 or C128,
   * {@code int} I32 or U32, {@code long} I64 or U64, {@code short} the bits of F16 or BF16. A
   * mismatch of dtype or length fails with BAD_REQUEST naming it, and nothing is sent.
   *
   * <p>The values are copied in bulk, in chunks with several in flight, so a large array is never
   * copied whole into another buffer and its copy overlaps the device's work: to a device in this
   * JVM each chunk is copied once, on a few copy threads, into a transfer buffer the device lends
   * (pinned memory on cuda, its shared region in process isolation) while earlier chunks go to the
   * GPU; to a device on another node chunks are views of at most {@code maxMessageSize}. Order holds as
   * for one request: a request made on the same context (or thread) before the upload is done
   * makes it send its remaining views at once. {@code data} may be read until the future
   * completes: do not change it before. If the upload fails, the target's contents are undefined.
   */
  @GenIgnore(GenIgnore.PERMITTED_TYPE)
  Future<BufferHandle> upload(BufferHandle target, float[] data);

  /** Writes an F64 or C128 buffer or view from {@code data}; as {@link #upload(BufferHandle, float[])}. */
  @GenIgnore(GenIgnore.PERMITTED_TYPE)
  Future<BufferHandle> upload(BufferHandle target, double[] data);

  /** Writes an I32 or U32 buffer or view from {@code data}; as {@link #upload(BufferHandle, float[])}. */
  @GenIgnore(GenIgnore.PERMITTED_TYPE)
  Future<BufferHandle> upload(BufferHandle target, int[] data);

  /** Writes an I64 or U64 buffer or view from {@code data}; as {@link #upload(BufferHandle, float[])}. */
  @GenIgnore(GenIgnore.PERMITTED_TYPE)
  Future<BufferHandle> upload(BufferHandle target, long[] data);

  /**
   * Writes an F16 or BF16 buffer or view from {@code data}, the elements' bits; as
   * {@link #upload(BufferHandle, float[])}.
   */
  @GenIgnore(GenIgnore.PERMITTED_TYPE)
  Future<BufferHandle> upload(BufferHandle target, short[] data);

  /**
   * Writes a buffer or view from the remaining elements of an NIO buffer (position to limit; the
   * buffer's position, limit and byte order are left as they are): a {@code FloatBuffer},
   * {@code DoubleBuffer}, {@code IntBuffer}, {@code LongBuffer} or {@code ShortBuffer} under the
   * dtype rules of {@link #upload(BufferHandle, float[])}, or a {@code ByteBuffer} holding any
   * dtype's little-endian bytes (as many as the target's byte length). Heap or direct, any order.
   */
  @GenIgnore(GenIgnore.PERMITTED_TYPE)
  Future<BufferHandle> upload(BufferHandle target, java.nio.Buffer data);

  /**
   * Reads an F32 or C64 buffer or view into a new array (a C64 element as two values: real,
   * imaginary). A buffer of another dtype fails with BAD_REQUEST; so does one longer than a Java
   * array (download views of it). Copied in bulk, in chunks, as {@link #upload(BufferHandle, float[])} says:
   * each chunk's lent reply is read with bulk gets and its memory given back at once. The new array
   * is made on a copy thread, never the caller's; but the JVM zeroes a new array of hundreds of MiB
   * without reaching a safepoint, and one asked for meanwhile stops every thread until the array is
   * zeroed. For large reads into memory you keep, use {@link #downloadInto} with
   * {@code FloatBuffer.wrap(array)}.
   */
  @GenIgnore(GenIgnore.PERMITTED_TYPE)
  Future<float[]> downloadFloats(BufferHandle source);

  /** Reads an F64 or C128 buffer or view into a new array; as {@link #downloadFloats}. */
  @GenIgnore(GenIgnore.PERMITTED_TYPE)
  Future<double[]> downloadDoubles(BufferHandle source);

  /** Reads an I32 or U32 buffer or view into a new array; as {@link #downloadFloats}. */
  @GenIgnore(GenIgnore.PERMITTED_TYPE)
  Future<int[]> downloadInts(BufferHandle source);

  /** Reads an I64 or U64 buffer or view into a new array; as {@link #downloadFloats}. */
  @GenIgnore(GenIgnore.PERMITTED_TYPE)
  Future<long[]> downloadLongs(BufferHandle source);

  /** Reads the bits of an F16 or BF16 buffer or view into a new array; as {@link #downloadFloats}. */
  @GenIgnore(GenIgnore.PERMITTED_TYPE)
  Future<short[]> downloadShorts(BufferHandle source);

  /**
   * Reads a buffer or view into the remaining elements of an NIO buffer, which must match its
   * dtype and length as {@link #upload(BufferHandle, java.nio.Buffer)} says (a {@code ByteBuffer}
   * takes any dtype's little-endian bytes). The values land from the target's position; its
   * position and limit are left as they are. A read-only target fails with BAD_REQUEST. The target
   * must not be used until the future completes; on failure its contents are undefined. (Named
   * apart from {@link #download(BufferHandle)} so that {@code client::download} stays one method.)
   */
  @GenIgnore(GenIgnore.PERMITTED_TYPE)
  Future<Void> downloadInto(BufferHandle source, java.nio.Buffer target);

  /**
   * Copies device to device; same dtype and length. The two may be on different devices, of this
   * node or of two nodes (whichever device this client is for): the copy is then staged through
   * host memory in views of at most {@code maxMessageSize} bytes (through the event bus when a
   * device is on another node). Either way it keeps its order on both devices as any request does:
   * it reads the source after what was sent there before it on this context (or thread), and what
   * is sent to the target after it and touches the target waits until the copy is written. If it
   * fails, the target's contents are undefined.
   */
  Future<BufferHandle> copy(BufferHandle source, BufferHandle target);

  /**
   * Sets every element of a buffer or view to {@code value}, converted to its dtype by
   * {@link DType#encode(double)}. Nothing is rounded into range: floating-point dtypes take NaN,
   * the infinities and finite values that stay finite in the dtype; integer dtypes take only
   * integral values in their range, at most 2^53 in magnitude (larger 64-bit values: use
   * {@link #fillInteger}). Any other value fails with BAD_REQUEST naming the dtype's range, and
   * nothing is sent. Complex buffers (C64, C128) take no fill: one number does not make a complex
   * element, so it fails with BAD_REQUEST; upload the values.
   */
  Future<BufferHandle> fill(BufferHandle target, double value);

  /**
   * Sets every element to the integer {@code value}, exact for 64-bit types ({@link DType#encode(long)}):
   * a value outside the dtype's range (for U64: below 0) fails with BAD_REQUEST naming the range.
   */
  Future<BufferHandle> fillInteger(BufferHandle target, long value);

  /**
   * A new scope on this client: buffers allocated through it are freed when it closes. See
   * {@link DeviceScope}.
   */
  DeviceScope scope();

  /**
   * Runs {@code work} in a new scope and closes the scope when the future it returns completes,
   * whether it succeeds or fails (or when {@code work} throws): every buffer allocated through the
   * scope and not detached from it is freed. The outcome is {@code work}'s, once the scope is
   * closed (where {@code work} throws, what it threw as a {@link CudaException}), on the
   * caller's context and never on its stack. To keep a buffer, {@link DeviceScope#detach detach} it.
   */
  @GenIgnore(GenIgnore.PERMITTED_TYPE)
  default <T> Future<T> withScope(Function<DeviceScope, Future<T>> work) {
    DeviceScope scope = scope();
    Future<T> outcome;
    try {
      outcome = Objects.requireNonNull(work.apply(scope), "the work returned no future");
    } catch (RuntimeException e) {
      // Typed (Failures' mapping; the work's own exception kept as the cause), and answered once the scope has closed, which
      // completes in a task of its own: never on the caller's stack.
      outcome = Future.failedFuture(Failures.toCudaException(e));
    }
    return outcome.eventually(scope::close);
  }

  /** The device's counters. */
  Future<DeviceStats> stats();

  /** What the device is and where it stands. */
  Future<DeviceInfo> describe();

  /**
   * Starts recording a pipeline for this device: a sequence of requests (fills, copies, BLAS
   * requests, FFTs, random numbers, kernels) that the device checks and prepares once and then
   * replays on request, on cuda as one CUDA graph. See {@link PipelineRecorder} for what can be recorded.
   */
  PipelineRecorder record();

  /**
   * Runs a recorded pipeline once. It is ordered like any request: after the requests sent before it
   * on the same context (or thread), before those sent after; the future completes once every step
   * has finished on the device. A pipeline recorded by an earlier context generation fails with
   * STALE_HANDLE; one whose buffers (or kernel modules) were freed since fails with the code that
   * using them would (NOT_FOUND), and nothing runs.
   */
  Future<Void> replay(PipelineHandle pipeline);

  /** Releases a recorded pipeline once the replays already sent are done; later replays fail with NOT_FOUND. */
  Future<Void> release(PipelineHandle pipeline);

  /**
   * Subscribes to the device's lifecycle events (generation changed, lost, ready, removed). Anything
   * can publish on the events address, so an event is only a reason to ask the device for its state
   * and generation: {@code handler} hears the transition the answer shows, from the generation this
   * subscriber knows — GENERATION_CHANGED when it serves at a newer generation, READY when a device
   * starting, gone or not seen serves, LOST when it says LOST, REMOVED when it no longer answers — and
   * only when an event of that type was offered, each transition once. Its generations are the
   * device's; its reason is the publisher's. An event of an older generation, or of a transition
   * already heard, costs no round trip; events that come while the device is being asked wait for
   * that answer. A body that is not a {@link DeviceEvent}, one without a type, for another node or
   * device, with a negative or decreasing generation, and every event not delivered are counted in
   * {@link #ignoredEvents()}. A transition arrives one or two device round trips after its event.
   */
  MessageConsumer<DeviceEvent> events(Handler<DeviceEvent> handler);

  /**
   * How many bodies on the device's events address this client's {@link #events} subscribers have
   * dropped: not valid events, or events the device did not confirm (once per subscriber that
   * received one). Growing means someone publishes on that address who should not.
   */
  long ignoredEvents();
}
