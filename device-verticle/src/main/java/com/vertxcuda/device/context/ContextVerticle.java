package com.vertxcuda.device.context;

import com.vertxcuda.Addresses;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.Library;
import com.vertxcuda.codec.CudaCodecs;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.impl.Backends;
import com.vertxcuda.device.spi.Backend;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.DeviceMemory;
import com.vertxcuda.device.spi.FaultInjection;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.HostMemoryRegistration;
import com.vertxcuda.device.spi.LibraryProvider;
import com.vertxcuda.message.AllocRequest;
import com.vertxcuda.message.CopyRequest;
import com.vertxcuda.message.DescribeRequest;
import com.vertxcuda.message.DeviceInfo;
import com.vertxcuda.message.DeviceStats;
import com.vertxcuda.message.DownloadReply;
import com.vertxcuda.message.DownloadRequest;
import com.vertxcuda.message.FaultRequest;
import com.vertxcuda.message.FillRequest;
import com.vertxcuda.message.FreeRequest;
import com.vertxcuda.message.StatsRequest;
import com.vertxcuda.message.UploadRequest;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.ThreadingModel;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.internal.buffer.BufferInternal;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * The inner tier: owns one CUDA (or host) context, its allocation table and its copy stream, and
 * deploys the library verticles. Runs as a worker on a single-thread pool, so every call on the
 * context happens on one OS thread. Replies leave when the device has finished the work.
 *
 * <p>Config: the {@link DeviceOptions} JSON plus {@code node} and {@code generation}.
 */
public class ContextVerticle extends VerticleBase {

  private static final System.Logger LOG = System.getLogger(ContextVerticle.class.getName());

  private ContextRuntime runtime;
  private DeviceContext device;
  private GpuStream stream;
  private MessageConsumer<Object> consumer;
  private boolean stalled;
  private final List<String> libraries = new ArrayList<>();

  @Override
  public Future<?> start() throws Exception {
    CudaCodecs.register(vertx.eventBus());
    DeviceOptions options = new DeviceOptions(config());
    String node = config().getString("node");
    long generation = config().getLong("generation");
    Backend backend = Backends.select(options);
    device = backend.open(options.getDevice());
    stream = device.createStream("context");
    long limit = options.getMemoryLimit();
    AllocationTable table = new AllocationTable(node, options.getDevice(), generation, limit);
    runtime = new ContextRuntime(vertx, options, node, generation, backend.name(), device, table);
    consumer = vertx.eventBus().localConsumer(Addresses.context(node, options.getDevice(), generation), this::handle);
    return consumer.completion().compose(v -> deployLibraries(options));
  }

  private Future<?> deployLibraries(DeviceOptions options) {
    List<Future<String>> deployed = new ArrayList<>();
    for (LibraryProvider provider : ServiceLoader.load(LibraryProvider.class, getClass().getClassLoader())) {
      Library library = provider.library();
      if (!options.getLibraries().contains(library)) {
        continue;
      }
      DeploymentOptions worker = new DeploymentOptions()
        .setThreadingModel(ThreadingModel.WORKER)
        .setWorkerPoolName(options.workerPoolNameOrDefault() + "-g" + runtime.generation() + "-" + library.suffix())
        .setWorkerPoolSize(1);
      deployed.add(vertx.deployVerticle(provider.create(runtime), worker)
        .onSuccess(id -> libraries.add(library.suffix())));
    }
    return Future.all(deployed);
  }

  @Override
  public Future<?> stop() {
    if (runtime != null) {
      // The device verticle forgets a context before it stops one; hearing this for its current
      // context means someone else is taking the device down (an undeploy, Vert.x closing).
      vertx.eventBus().send(Addresses.supervisor(runtime.node(), runtime.deviceIndex()),
        new io.vertx.core.json.JsonObject().put("generation", runtime.generation()).put("stopped", true));
    }
    if (device != null) {
      boolean poisoned = runtime.isPoisoned();
      for (Allocation a : runtime.allocations().drain()) {
        runtime.ordering().forget(a);
        if (!poisoned) {
          try {
            device.release(a.memory());
          } catch (BackendException e) {
            LOG.log(System.Logger.Level.WARNING, "release on close failed: " + e.getMessage());
          }
        }
      }
      device.close(poisoned);
    }
    return Future.succeededFuture();
  }

  /** The runtime shared with library verticles (for tests and in-process tools). */
  public ContextRuntime runtime() {
    return runtime;
  }

  private void handle(Message<Object> m) {
    if (stalled) {
      return;
    }
    long seq = RequestSequencer.of(m);
    runtime.sequencer().enter(seq, this);
    Probe.mark(seq, Probe.Point.RECEIVED);
    try {
      serve(m);
    } finally {
      runtime.sequencer().done(seq);
      Probe.mark(seq, Probe.Point.QUEUED);
    }
  }

  private void serve(Message<Object> m) {
    if (runtime.isPoisoned()) {
      Failures.fail(m, runtime.lostFailure());
      return;
    }
    if (UnreadableRequest.answer(m)) {
      return;
    }
    Object body = m.body();
    try {
      if (body instanceof AllocRequest) {
        alloc(m, (AllocRequest) body);
      } else if (body instanceof FreeRequest) {
        free(m, (FreeRequest) body);
      } else if (body instanceof UploadRequest) {
        upload(m, (UploadRequest) body);
      } else if (body instanceof DownloadRequest) {
        download(m, (DownloadRequest) body);
      } else if (body instanceof CopyRequest) {
        copy(m, (CopyRequest) body);
      } else if (body instanceof FillRequest) {
        fill(m, (FillRequest) body);
      } else if (body instanceof StatsRequest) {
        m.reply(stats());
      } else if (body instanceof DescribeRequest) {
        m.reply(describe());
      } else if (body instanceof TransferRequest) {
        transfer(m, (TransferRequest) body);
      } else if (body instanceof FaultRequest) {
        fault(m, (FaultRequest) body);
      } else {
        Failures.fail(m, FailureCode.BAD_REQUEST, "the device does not serve "
          + (body == null ? "an empty message" : body.getClass().getSimpleName()));
      }
    } catch (Throwable t) {
      runtime.fail(m, t);
    }
  }

  private void alloc(Message<Object> m, AllocRequest r) throws BackendException {
    AllocationTable table = runtime.allocations();
    long bytes = table.checkAllocation(r.getDtype(), r.getCount());
    table.reserve(bytes);
    DeviceMemory memory;
    try {
      memory = device.allocate(bytes);
    } catch (BackendException | RuntimeException e) {
      table.unreserve(bytes);
      throw e;
    }
    m.reply(table.register(r.getDtype(), r.getCount(), r.getOwner(), memory).handle());
  }

  private void free(Message<Object> m, FreeRequest r) {
    AllocationTable table = runtime.allocations();
    Allocation a = table.remove(r.getHandle());
    List<GpuEvent> uses = runtime.ordering().pendingUses(a);
    runtime.ordering().forget(a);
    // Memory returns only after every recorded use has completed, on this context's thread.
    runtime.afterUses(uses, context, () -> {
      if (!runtime.isPoisoned()) {
        try {
          device.release(a.memory());
        } catch (BackendException e) {
          LOG.log(System.Logger.Level.WARNING, "release failed: " + e.getMessage());
        }
      }
      table.unreserve(a.bytes());
    });
    m.reply(a.handle());
  }

  private void upload(Message<Object> m, UploadRequest r) throws BackendException {
    if (r.getData() == null) {
      throw new CudaException(FailureCode.BAD_REQUEST, "data is missing");
    }
    BufferHandle h = r.getHandle();
    ByteBuffer src = ((BufferInternal) r.getData()).getByteBuf().nioBuffer();
    toDevice(h, src).onReply(m, () -> h);
  }

  private void download(Message<Object> m, DownloadRequest r) throws BackendException {
    BufferHandle h = r.getHandle();
    runtime.allocations().resolve(h, "handle");
    Transfers.checkDownload(h, Math.min(h.byteLength(), Transfers.MAX_DOWNLOAD));
    // The device picks the memory copies reach fastest: pinned on cuda, the host buffer pool elsewhere.
    int bytes = (int) h.byteLength();
    Buffer out = device.hostBuffer(bytes);
    ByteBuffer dst = ((BufferInternal) out).getByteBuf().nioBuffer(0, bytes);
    Queued queued;
    try {
      queued = toHost(h, dst);
    } catch (BackendException | RuntimeException e) {
      device.releaseHostBuffer(out);
      throw e;
    }
    queued.onReply(m, () -> new DownloadReply(h, out));
  }

  private void transfer(Message<Object> m, TransferRequest r) throws BackendException {
    BufferHandle h = r.handle();
    if (r.direction() == TransferRequest.Direction.REGISTER) {
      boolean pinned = device instanceof HostMemoryRegistration;
      if (pinned) {
        ((HostMemoryRegistration) device).registerHostMemory(r.host());
      }
      m.reply(pinned);
    } else if (r.direction() == TransferRequest.Direction.TO_DEVICE) {
      toDevice(h, r.host()).onReply(m, () -> h);
    } else {
      toHost(h, r.host()).onReply(m, () -> h);
    }
  }

  /** Work queued on the copy stream, answered when the device has finished it. */
  private final class Queued {
    final GpuEvent done;

    Queued(GpuEvent done) {
      this.done = done;
    }

    <T> void onReply(Message<Object> m, java.util.function.Supplier<T> reply) {
      runtime.replyWhenDone(m, done, reply);
    }
  }

  private Queued toDevice(BufferHandle h, ByteBuffer src) throws BackendException {
    Allocation a = runtime.allocations().resolve(h, "handle");
    Transfers.checkUpload(h, src.remaining());
    return new Queued(runtime.ordering().run(stream, List.of(), List.of(a),
      () -> device.copyHostToDevice(stream, src, a.memory(), h.byteOffset())));
  }

  private Queued toHost(BufferHandle h, ByteBuffer dst) throws BackendException {
    Allocation a = runtime.allocations().resolve(h, "handle");
    Transfers.checkDownload(h, dst.remaining());
    return new Queued(runtime.ordering().run(stream, List.of(a), List.of(),
      () -> device.copyDeviceToHost(stream, a.memory(), h.byteOffset(), dst)));
  }

  private void copy(Message<Object> m, CopyRequest r) throws BackendException {
    BufferHandle s = r.getSource();
    BufferHandle t = r.getTarget();
    Allocation src = runtime.allocations().resolve(s, "source");
    Allocation dst = runtime.allocations().resolve(t, "target");
    if (s.dtype() != t.dtype() || s.length() != t.length()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "source is " + s.length() + " " + s.dtype()
        + " but target is " + t.length() + " " + t.dtype());
    }
    if (src == dst && s.offset() < t.offset() + t.length() && t.offset() < s.offset() + s.length()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "source and target overlap");
    }
    GpuEvent done = runtime.ordering().run(stream, List.of(src), List.of(dst),
      () -> device.copyDeviceToDevice(stream, src.memory(), s.byteOffset(), dst.memory(), t.byteOffset(), s.byteLength()));
    runtime.replyWhenDone(m, done, () -> t);
  }

  private void fill(Message<Object> m, FillRequest r) throws BackendException {
    BufferHandle h = r.getHandle();
    Allocation a = runtime.allocations().resolve(h, "handle");
    int size = h.dtype().size();
    long bits = size == 8 ? r.getBits() : r.getBits() & ((1L << (8 * size)) - 1);
    if (bits != r.getBits()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "bits 0x" + Long.toHexString(r.getBits())
        + " do not fit in one " + h.dtype() + " element");
    }
    GpuEvent done = runtime.ordering().run(stream, List.of(), List.of(a),
      () -> device.fill(stream, a.memory(), h.byteOffset(), h.length(), size, bits));
    runtime.replyWhenDone(m, done, () -> h);
  }

  private DeviceStats stats() throws BackendException {
    long[] mem = device.memoryInfo();
    AllocationTable table = runtime.allocations();
    return new DeviceStats()
      .setGeneration(runtime.generation())
      .setBytesAllocated(table.liveBytes())
      .setBuffersAllocated(table.liveBuffers())
      .setCachedBytes(device.cachedBytes())
      .setBackendFreeBytes(mem[0])
      .setBackendTotalBytes(mem[1]);
  }

  private DeviceInfo describe() throws BackendException {
    long total = device.memoryInfo()[1];
    long limit = runtime.options().getMemoryLimit();
    return new DeviceInfo()
      .setNode(runtime.node())
      .setDevice(runtime.deviceIndex())
      .setName(device.deviceName())
      .setBackend(runtime.backend())
      .setComputeCapability(device.computeCapability())
      .setTotalMemory(limit > 0 ? Math.min(limit, total) : total)
      .setGeneration(runtime.generation())
      .setPid(ProcessHandle.current().pid())
      .setLibraries(new ArrayList<>(libraries));
  }

  private void fault(Message<Object> m, FaultRequest r) throws BackendException {
    if (!runtime.options().isFaultInjection() || !(device instanceof FaultInjection)) {
      throw new CudaException(FailureCode.UNSUPPORTED, "fault injection needs the host backend and "
        + "DeviceOptions.faultInjection");
    }
    if (r.getKind() == null) {
      throw new CudaException(FailureCode.BAD_REQUEST, "kind is missing");
    }
    FaultInjection faults = (FaultInjection) device;
    switch (r.getKind()) {
      case POISON:
        faults.poison(stream);
        runtime.replyWhenDone(m, device.record(stream), () -> r);
        break;
      case FAIL_NEXT_ALLOCATION:
        faults.failNextAllocation();
        m.reply(r);
        break;
      case FAIL_NEXT_OPERATION:
        faults.failNextOperation();
        m.reply(r);
        break;
      default:
        stalled = true;
        LOG.log(System.Logger.Level.WARNING, "context generation " + runtime.generation() + " stalled on request");
    }
  }
}
