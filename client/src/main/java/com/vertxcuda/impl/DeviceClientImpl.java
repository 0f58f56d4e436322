package com.vertxcuda.impl;

import com.vertxcuda.internal.BulkTransfer;
import com.vertxcuda.internal.ChunkedTransfer;
import com.vertxcuda.internal.CudaRuntime;
import com.vertxcuda.internal.HostElements;
import com.vertxcuda.internal.LocalRoutes;
import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.internal.TransferMemory;
import com.vertxcuda.Addresses;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.DeviceScope;
import com.vertxcuda.Failures;
import com.vertxcuda.PipelineHandle;
import com.vertxcuda.PipelineRecorder;
import com.vertxcuda.message.AllocRequest;
import com.vertxcuda.message.CopyRequest;
import com.vertxcuda.message.DescribeRequest;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.DeviceStats;
import com.vertxcuda.message.DownloadReply;
import com.vertxcuda.message.DownloadRequest;
import com.vertxcuda.message.FillRequest;
import com.vertxcuda.message.FreeRequest;
import com.vertxcuda.message.ReleasePipelineRequest;
import com.vertxcuda.message.ReplayRequest;
import com.vertxcuda.message.StatsRequest;
import com.vertxcuda.message.UploadRequest;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.message.KeepRequest;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageConsumer;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

public final class DeviceClientImpl implements DeviceClient {

  private final RequestSender sender;
  private final String node;
  private final int device;
  private final int maxMessageSize;
  private final long timeout;
  private final AtomicLong ignoredEvents = new AtomicLong();

  public DeviceClientImpl(Vertx vertx, DeviceClientOptions options) {
    this.sender = RequestSender.of(vertx, options, null);
    this.node = Addresses.nodeOf(sender.address());
    this.device = options.getDevice();
    this.maxMessageSize = options.getMaxMessageSize();
    this.timeout = options.getTimeout();
  }

  @Override
  public String address() {
    return sender.address();
  }

  @Override
  public Future<BufferHandle> alloc(DType dtype, long count) {
    return sender.request(new AllocRequest(dtype, count));
  }

  @Override
  public Future<BufferHandle> allocUninitialized(DType dtype, long count) {
    return sender.request(new AllocRequest(dtype, count).setUninitialized(true));
  }

  @Override
  public Future<BufferHandle> keep(BufferHandle buffer) {
    return sender.request(new KeepRequest(buffer));
  }

  @Override
  public Future<Void> free(BufferHandle buffer) {
    return sender.<BufferHandle>request(new FreeRequest(buffer)).mapEmpty();
  }

  /**
   * To a device on another node, data larger than {@link BulkTransfer#threshold} (1 MiB) goes over
   * the node's bulk side channel ({@link BulkTransfer}); anything sent later from the same context
   * still follows all of it.
   */
  @Override
  public Future<BufferHandle> upload(BufferHandle target, Buffer data) {
    if (target == null || data == null || ChunkedTransfer.oversized(target) || !pumped(data, target)) {
      return sender.request(new UploadRequest(target, data));
    }
    if (data.length() != target.byteLength()) {
      return sender.refuse(new CudaException(FailureCode.BAD_REQUEST, "upload of " + data.length()
        + " bytes into a range of " + target.byteLength() + " bytes"));
    }
    // To another node read piece by piece: a Buffer over several pieces is never merged first.
    return upload(target, () -> sender.remote() ? HostElements.received(data) : HostElements.ofBuffer(data));
  }

  /**
   * Whether an upload of {@code data} goes through the one pump ({@link ChunkedTransfer}): to another
   * node, past {@link BulkTransfer#threshold} (then over the side channel); to a device in this JVM,
   * as {@link ChunkedTransfer#pumpedLocally}.
   */
  private boolean pumped(Buffer data, BufferHandle target) {
    if (sender.remote()) {
      return data.length() > BulkTransfer.threshold(maxMessageSize);
    }
    LocalRoutes.Route route = sender.localRoute();
    return route != null && ChunkedTransfer.pumpedLocally(route.transferMemory(), target, data);
  }

  /**
   * From a device on another node, a range larger than {@link BulkTransfer#threshold} comes back over
   * the node's bulk side channel ({@link BulkTransfer}) into heap arrays of
   * {@link HostElements#SEGMENT} bytes, one Buffer over them all ({@link HostElements#segmented}: a
   * composite, with no one backing array);
   * from a device in this JVM, a range larger than the device may lend at once
   * ({@link ChunkedTransfer#pumpedLocally}), through lent memory in bounded pieces, into pooled host memory
   * the device lends, else into heap arrays of {@link HostElements#SEGMENT} bytes as from another node
   * ({@link ChunkedTransfer#downloadLanded}).
   */
  @Override
  public Future<Buffer> download(BufferHandle source) {
    LocalRoutes.Route route = sender.remote() ? null : sender.localRoute();
    boolean pumped = source != null && (sender.remote()
      ? !ChunkedTransfer.oversized(source) && source.byteLength() > BulkTransfer.threshold(maxMessageSize)
        && source.byteLength() <= Integer.MAX_VALUE - 8
      : route != null && ChunkedTransfer.pumpedLocally(route.transferMemory(), source));
    if (!pumped) {
      return sender.<DownloadReply>request(new DownloadRequest(source)).map(DownloadReply::getData);
    }
    if (route != null) {
      // Into pooled host memory the device lends (reused from one large download to the next), else
      // into heap arrays of about 32 MiB, made on the copy threads (ChunkedTransfer.downloadLanded).
      try {
        return ChunkedTransfer.downloadLanded(sender, source, route.transferMemory()::landing);
      } catch (RuntimeException refused) {
        return sender.refuse(refused);
      }
    }
    // From another node: into heap arrays of about 32 MiB each, made by the copy threads as the stream
    // arrives (not one array zeroed ahead of it), handed over as one Buffer.
    HostElements into = HostElements.segmented((int) source.byteLength());
    try {
      return ChunkedTransfer.download(sender, source, into, maxMessageSize).map(x -> into.landed());
    } catch (RuntimeException refused) {
      return sender.refuse(refused);
    }
  }

  @Override
  public Future<BufferHandle> upload(BufferHandle target, float[] data) {
    return upload(target, () -> HostElements.of(data));
  }

  @Override
  public Future<BufferHandle> upload(BufferHandle target, double[] data) {
    return upload(target, () -> HostElements.of(data));
  }

  @Override
  public Future<BufferHandle> upload(BufferHandle target, int[] data) {
    return upload(target, () -> HostElements.of(data));
  }

  @Override
  public Future<BufferHandle> upload(BufferHandle target, long[] data) {
    return upload(target, () -> HostElements.of(data));
  }

  @Override
  public Future<BufferHandle> upload(BufferHandle target, short[] data) {
    return upload(target, () -> HostElements.of(data));
  }

  @Override
  public Future<BufferHandle> upload(BufferHandle target, java.nio.Buffer data) {
    return upload(target, () -> HostElements.of(data, false));
  }

  @Override
  public Future<float[]> downloadFloats(BufferHandle source) {
    return downloadArray(source, float[].class);
  }

  @Override
  public Future<double[]> downloadDoubles(BufferHandle source) {
    return downloadArray(source, double[].class);
  }

  @Override
  public Future<int[]> downloadInts(BufferHandle source) {
    return downloadArray(source, int[].class);
  }

  @Override
  public Future<long[]> downloadLongs(BufferHandle source) {
    return downloadArray(source, long[].class);
  }

  @Override
  public Future<short[]> downloadShorts(BufferHandle source) {
    return downloadArray(source, short[].class);
  }

  @Override
  public Future<Void> downloadInto(BufferHandle source, java.nio.Buffer target) {
    try {
      return ChunkedTransfer.download(sender, source, HostElements.of(target, true), maxMessageSize);
    } catch (RuntimeException refused) {
      return sender.refuse(Failures.toCudaException(refused));
    }
  }

  // Refusals (a mismatched dtype or length) fail the future; nothing is sent.
  private Future<BufferHandle> upload(BufferHandle target, Supplier<HostElements> data) {
    try {
      return ChunkedTransfer.upload(sender, target, data.get(), maxMessageSize).map(target);
    } catch (RuntimeException refused) {
      return sender.refuse(Failures.toCudaException(refused));
    }
  }

  private <A> Future<A> downloadArray(BufferHandle source, Class<A> type) {
    try {
      HostElements into = HostElements.arrayFor(source, type);
      return ChunkedTransfer.download(sender, source, into, maxMessageSize).map(x -> type.cast(into.array()));
    } catch (RuntimeException refused) {
      return sender.refuse(Failures.toCudaException(refused));
    }
  }

  @Override
  public DeviceScope scope() {
    return new DeviceScopeImpl(this, sender.vertx());
  }

  /**
   * Between two devices (handles of different devices or nodes), staged: {@link CrossDeviceCopy}.
   * Within another device than this client's, sent to that device.
   */
  @Override
  public Future<BufferHandle> copy(BufferHandle source, BufferHandle target) {
    if (source == null || target == null || !served(source) || !served(target)) {
      // A handle no device serves (a forged node, a device that is gone): this client's device refuses it.
      return sender.request(new CopyRequest(source, target));
    }
    if (CrossDeviceCopy.crosses(source, target)) {
      return CrossDeviceCopy.copy(sender.vertx(), source, target, timeout, maxMessageSize);
    }
    if (source.device() != device || !source.node().equals(node)) {
      return new RequestSender(sender.vertx(), Addresses.device(source.node(), source.device()), timeout)
        .request(new CopyRequest(source, target));
    }
    return sender.request(new CopyRequest(source, target));
  }

  /**
   * Whether a device deployed in this JVM, or on a node now in the cluster, serves {@code h}'s device;
   * false for a handle that names no device address at all (no node, a negative device, a node with
   * a dot), which this client's device then refuses.
   */
  private boolean served(BufferHandle h) {
    Vertx vertx = sender.vertx();
    String address;
    try {
      address = Addresses.device(h.node(), h.device());
    } catch (IllegalArgumentException e) {
      return false;
    }
    CudaRuntime runtime = CudaRuntime.of(vertx);
    return runtime.routes().get(address) != null
      || vertx.isClustered() && runtime.clusterWatch().members().contains(h.node());
  }

  @Override
  public Future<BufferHandle> fill(BufferHandle target, double value) {
    if (target == null) {
      return sender.refuse(Failures.toCudaException(new IllegalArgumentException("handle is null")));
    }
    try {
      return sender.request(FillRequest.of(target, value));
    } catch (IllegalArgumentException e) {
      return sender.refuse(Failures.toCudaException(e));
    }
  }

  @Override
  public Future<BufferHandle> fillInteger(BufferHandle target, long value) {
    if (target == null) {
      return sender.refuse(Failures.toCudaException(new IllegalArgumentException("handle is null")));
    }
    try {
      return sender.request(FillRequest.ofInteger(target, value));
    } catch (IllegalArgumentException e) {
      return sender.refuse(Failures.toCudaException(e));
    }
  }

  @Override
  public Future<DeviceStats> stats() {
    return sender.request(new StatsRequest());
  }

  @Override
  public Future<DeviceInfo> describe() {
    return sender.request(new DescribeRequest());
  }

  @Override
  public PipelineRecorder record() {
    return new PipelineRecorderImpl(sender);
  }

  @Override
  public Future<Void> replay(PipelineHandle pipeline) {
    if (pipeline == null) {
      return sender.refuse(new CudaException(FailureCode.BAD_REQUEST, "pipeline is missing"));
    }
    return sender.request(new ReplayRequest(pipeline)).mapEmpty();
  }

  @Override
  public Future<Void> release(PipelineHandle pipeline) {
    if (pipeline == null) {
      return sender.refuse(new CudaException(FailureCode.BAD_REQUEST, "pipeline is missing"));
    }
    return sender.request(new ReleasePipelineRequest(pipeline)).mapEmpty();
  }

  /**
   * Each valid event is judged with the device's own answer before anything reaches {@code handler}
   * ({@link TrustedEvents}); the starting point is the device's answer to a describe sent first.
   */
  @Override
  @SuppressWarnings("unchecked")
  public MessageConsumer<DeviceEvent> events(Handler<DeviceEvent> handler) {
    TrustedEvents trusted = new TrustedEvents(node, device, this::describe, handler, ignoredEvents, () -> { });
    // Consumed as Object: a body of another type must not reach a cast in the subscriber.
    MessageConsumer<Object> consumer = sender.vertx().eventBus().consumer(Addresses.events(node, device), m -> {
      Object body = m.body();
      if (body instanceof DeviceEvent && valid((DeviceEvent) body)) {
        trusted.offer((DeviceEvent) body);
      } else {
        ignoredEvents.incrementAndGet();
      }
    });
    trusted.startFrom(describe());
    if (sender.remote()) {
      // A node that left publishes nothing: its LOST event is raised here.
      CudaRuntime.of(sender.vertx()).clusterWatch().onLeftWhileRegistered(consumer, sender.vertx().getOrCreateContext(), left -> {
        if (left.equals(node)) {
          trusted.deliverLocal("node " + node + " left the cluster");
        }
      });
    }
    return (MessageConsumer<DeviceEvent>) (MessageConsumer<?>) consumer;
  }

  @Override
  public long ignoredEvents() {
    return ignoredEvents.get();
  }

  private boolean valid(DeviceEvent e) {
    return e.getType() != null && node.equals(e.getNode()) && e.getDevice() == device
      && e.getOldGeneration() >= 0 && e.getNewGeneration() >= e.getOldGeneration();
  }
}
