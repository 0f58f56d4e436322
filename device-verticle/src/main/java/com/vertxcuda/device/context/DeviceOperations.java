package com.vertxcuda.device.context;

import com.vertxcuda.impl.VertxInternals;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.DeviceMemory;
import com.vertxcuda.device.spi.FaultInjection;
import com.vertxcuda.device.spi.Footprint;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.HostMemoryRegistration;
import com.vertxcuda.device.spi.Preparation;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.device.spi.RequestHandler;
import com.vertxcuda.device.spi.UnreadableRequest;
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
import com.vertxcuda.message.KeepRequest;
import com.vertxcuda.impl.CopyInChunk;
import com.vertxcuda.impl.CopyInRequest;
import com.vertxcuda.impl.CopyOutRequest;
import com.vertxcuda.impl.ReclaimRequest;
import com.vertxcuda.message.StatsRequest;
import com.vertxcuda.message.UploadRequest;
import io.vertx.core.buffer.Buffer;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The device's own operations on the submission thread: alloc, free, copies (host to device,
 * device to host, device to device), fill, stats, describe, fault injection, and the device host's
 * transfers through its shared region. Copies and fills run on the context's copy stream.
 */
final class DeviceOperations implements RequestHandler, com.vertxcuda.device.spi.Recordable {

  private static final System.Logger LOG = System.getLogger(DeviceOperations.class.getName());

  private final ContextRuntime runtime;
  private final DeviceContext device;
  private final GpuStream stream;
  /** Transfers in chunks in progress, by the id of their first chunk. */
  private final java.util.Map<Long, SubmissionLoop.Hold> transfers = new java.util.HashMap<>();
  /** Copies into this device from another in progress. */
  private final CopyIns copyIns;

  DeviceOperations(ContextRuntime runtime, GpuStream stream) {
    this.runtime = runtime;
    this.device = runtime.device();
    this.stream = stream;
    this.pipelines = new Pipelines(runtime);
    this.copyIns = new CopyIns(runtime, stream);
  }

  private final Pipelines pipelines;

  @Override
  public Footprint footprint(Object body) {
    if (body instanceof FreeRequest) {
      return Footprint.builder().write(((FreeRequest) body).getHandle()).build();
    } else if (body instanceof UploadRequest) {
      return Footprint.builder().write(((UploadRequest) body).getHandle()).build();
    } else if (body instanceof DownloadRequest) {
      return Footprint.builder().read(((DownloadRequest) body).getHandle()).build();
    } else if (body instanceof CopyRequest) {
      CopyRequest c = (CopyRequest) body;
      return Footprint.builder().read(c.getSource()).write(c.getTarget()).build();
    } else if (body instanceof FillRequest) {
      return Footprint.builder().write(((FillRequest) body).getHandle()).build();
    } else if (body instanceof TransferRequest) {
      return footprint((TransferRequest) body);
    } else if (body instanceof com.vertxcuda.message.ReplayRequest) {
      return pipelines.footprint((com.vertxcuda.message.ReplayRequest) body);
    } else if (body instanceof com.vertxcuda.message.ReleasePipelineRequest) {
      return Footprint.NONE;
    } else if (body instanceof CopyInRequest) {
      return CopyIns.footprint((CopyInRequest) body);
    } else if (body instanceof CopyOutRequest) {
      return Footprint.builder().read(((CopyOutRequest) body).source()).build();
    } else if (body instanceof AllocRequest || body instanceof StatsRequest || body instanceof DescribeRequest
      || body instanceof KeepRequest) {
      return Footprint.NONE;
    }
    return Footprint.EVERYTHING;
  }

  private static Footprint footprint(TransferRequest t) {
    return t.direction() == TransferRequest.Direction.TO_HOST
      ? Footprint.builder().read(t.handle()).build() : Footprint.builder().write(t.handle()).build();
  }

  @Override
  public Preparation submit(Request r, Object prepared) throws Exception {
    if (runtime.isPoisoned()) {
      r.fail(runtime.lostFailure());
      return null;
    }
    Object body = r.body();
    if (body instanceof UploadRequest) {
      return upload(r, (UploadRequest) body, (Buffer) prepared);
    } else if (body instanceof DownloadRequest) {
      return download(r, (DownloadRequest) body, (Buffer) prepared);
    } else if (body instanceof FillRequest) {
      fill(r, (FillRequest) body);
    } else if (body instanceof CopyRequest) {
      copy(r, (CopyRequest) body);
    } else if (body instanceof AllocRequest) {
      return alloc(r, (AllocRequest) body, (PreparedMemory) prepared);
    } else if (body instanceof FreeRequest) {
      free(r, (FreeRequest) body);
    } else if (body instanceof KeepRequest) {
      keep(r, (KeepRequest) body);
    } else if (body instanceof ReclaimRequest) {
      reclaim(r, (ReclaimRequest) body);
    } else if (body instanceof TransferRequest) {
      transfer(r, (TransferRequest) body);
    } else if (body instanceof com.vertxcuda.message.ReplayRequest) {
      pipelines.replay(r, (com.vertxcuda.message.ReplayRequest) body);
    } else if (body instanceof com.vertxcuda.message.RecordRequest) {
      pipelines.record(r, (com.vertxcuda.message.RecordRequest) body);
    } else if (body instanceof com.vertxcuda.message.ReleasePipelineRequest) {
      pipelines.release(r, (com.vertxcuda.message.ReleasePipelineRequest) body);
    } else if (body instanceof CopyInRequest) {
      copyIns.start(r, (CopyInRequest) body);
    } else if (body instanceof CopyInChunk) {
      copyIns.chunk(r);
    } else if (body instanceof CopyOutRequest) {
      copyOut(r, (CopyOutRequest) body);
    } else if (body instanceof StatsRequest) {
      r.reply(stats());
    } else if (body instanceof DescribeRequest) {
      r.reply(describe());
    } else if (body instanceof FaultRequest) {
      fault(r, (FaultRequest) body);
    } else if (body instanceof UnreadableRequest) {
      r.fail(new CudaException(FailureCode.BAD_REQUEST, "the request cannot be read: "
        + ((UnreadableRequest) body).reason()));
    } else {
      r.fail(new CudaException(FailureCode.BAD_REQUEST, "the device does not serve "
        + (body == null ? "an empty message" : body.getClass().getSimpleName())));
    }
    return null;
  }

  /**
   * Small allocations are served here; a large one ({@value #PREPARED_BYTES} bytes or more: a fresh
   * device allocation, or fresh host memory on the host backend, can take milliseconds) is made
   * off the submission thread. It touches no buffer, so nothing waits for it.
   */
  private Preparation alloc(Request r, AllocRequest a, PreparedMemory prepared) throws BackendException {
    AllocationTable table = runtime.allocations();
    long bytes = table.checkAllocation(a.getDtype(), a.getCount());
    String owner = r.owner();
    DeviceMemory memory;
    if (prepared == null) {
      table.reserve(bytes, owner);
      if (bytes >= PREPARED_BYTES) {
        return () -> new PreparedMemory(table, allocate(table, bytes, owner), bytes, owner);
      }
      memory = allocate(table, bytes, owner);
    } else {
      memory = prepared.memory;
    }
    r.reply(table.register(a.getDtype(), a.getCount(), owner, memory).handle());
    return null;
  }

  /**
   * A large allocation made off the submission thread. If its request is answered before it is taken
   * (a timeout, the context closing), the submission loop closes it: the memory and its reservation
   * go back.
   */
  private final class PreparedMemory implements AutoCloseable {
    final AllocationTable table;
    final DeviceMemory memory;
    final long bytes;
    final String owner;

    PreparedMemory(AllocationTable table, DeviceMemory memory, long bytes, String owner) {
      this.table = table;
      this.memory = memory;
      this.bytes = bytes;
      this.owner = owner;
    }

    @Override
    public void close() throws BackendException {
      try {
        if (!runtime.isPoisoned()) {
          device.release(memory);
        }
      } finally {
        table.unreserve(bytes, owner);
      }
    }
  }

  /** Sizes from which allocations of device and host memory are prepared off the submission thread. */
  static final long PREPARED_BYTES = 1 << 20;

  private DeviceMemory allocate(AllocationTable table, long bytes, String owner) throws BackendException {
    try {
      return device.allocate(bytes);
    } catch (BackendException | RuntimeException | Error e) {
      // An Error too: the host backend lets the JVM's OutOfMemoryError through for Failures to map.
      table.unreserve(bytes, owner);
      throw e;
    }
  }

  private void free(Request r, FreeRequest f) {
    Allocation a = runtime.allocations().remove(f.getHandle());
    release(a);
    r.reply(a.handle());
  }

  private void keep(Request r, KeepRequest k) {
    AllocationTable table = runtime.allocations();
    Allocation a = table.resolve(k.getHandle(), "handle");
    table.disown(a);
    r.reply(a.handle());
  }

  /** Frees what a departed node held: its buffers (each once its uses are done), then its library objects. */
  private void reclaim(Request r, ReclaimRequest rr) {
    AllocationTable table = runtime.allocations();
    long freed = 0;
    for (Allocation a : table.ownedBy(rr.owner())) {
      try {
        release(table.remove(a.handle()));
        freed++;
      } catch (CudaException gone) {
        // freed meanwhile
      }
    }
    runtime.ownerGone(rr.owner());
    if (freed > 0) {
      LOG.log(System.Logger.Level.INFO, "reclaimed " + freed + " buffers of departed node " + rr.owner());
    }
    r.reply(null);
  }

  // Memory returns after every recorded use of {@code a} has completed, on the submission thread.
  private void release(Allocation a) {
    AllocationTable table = runtime.allocations();
    List<GpuEvent> uses = runtime.ordering().pendingUses(a);
    runtime.ordering().forget(a);
    // Memory returns only after every recorded use has completed, on the submission thread.
    runtime.afterUses(uses, () -> {
      if (!runtime.isPoisoned()) {
        try {
          device.release(a.memory());
        } catch (BackendException e) {
          LOG.log(System.Logger.Level.WARNING, "release failed: " + e.getMessage());
        }
      }
      table.unreserve(a.bytes(), null); // its owner's share went when it was removed
    });
  }

  /**
   * Uploads from direct memory go to the device as they are. A large upload from the Java heap is
   * first copied, off the submission thread, into memory the device copies from fastest (pinned on
   * cuda), so staging it never holds up the requests behind it.
   */
  private Preparation upload(Request r, UploadRequest u, Buffer staged) throws BackendException {
    if (u.getData() == null) {
      throw new CudaException(FailureCode.BAD_REQUEST, "data is missing");
    }
    BufferHandle h = u.getHandle();
    ByteBuffer src = VertxInternals.byteBuf(u.getData()).nioBuffer();
    if (staged == null && !src.isDirect() && src.remaining() >= PREPARED_BYTES) {
      runtime.allocations().resolve(h, "handle");
      Transfers.checkUpload(h, src.remaining());
      return () -> {
        Buffer into = device.hostBuffer(src.remaining());
        VertxInternals.byteBuf(into).nioBuffer(0, src.remaining()).put(src.duplicate());
        return into;
      };
    }
    ByteBuffer from = staged == null ? src : VertxInternals.byteBuf(staged).nioBuffer(0, src.remaining());
    GpuEvent done;
    try {
      done = toDevice(h, from);
    } catch (BackendException | RuntimeException e) {
      if (staged != null) {
        device.releaseHostBuffer(staged);
      }
      throw e;
    }
    runtime.replyWhenDone(r, done, () -> {
      if (staged != null) {
        device.releaseHostBuffer(staged);
      }
      return h;
    });
    return null;
  }

  private Preparation download(Request r, DownloadRequest d, Buffer prepared) throws BackendException {
    BufferHandle h = d.getHandle();
    runtime.allocations().resolve(h, "handle");
    Transfers.checkDownload(h, Math.min(h.byteLength(), Transfers.MAX_DOWNLOAD));
    // The device picks the memory copies reach fastest: pinned on cuda, the host buffer pool
    // elsewhere. A pool's idle block is taken here; fresh memory can take milliseconds, so a large
    // one is made off the submission thread while the download keeps its place.
    int bytes = (int) h.byteLength();
    Buffer idle = prepared != null ? prepared : device.idleHostBuffer(bytes);
    if (idle == null && bytes >= PREPARED_BYTES) {
      return () -> device.hostBuffer(bytes);
    }
    Buffer out = idle != null ? idle : device.hostBuffer(bytes);
    ByteBuffer dst = VertxInternals.byteBuf(out).nioBuffer(0, bytes);
    GpuEvent done;
    try {
      done = toHost(h, dst);
    } catch (BackendException | RuntimeException e) {
      device.releaseHostBuffer(out);
      throw e;
    }
    runtime.replyWhenDone(r, done, () -> new DownloadReply(h, out));
    return null;
  }

  private void transfer(Request r, TransferRequest t) throws BackendException {
    BufferHandle h = t.handle();
    if (t.direction() == TransferRequest.Direction.REGISTER) {
      boolean pinned = device instanceof HostMemoryRegistration;
      if (pinned) {
        ((HostMemoryRegistration) device).registerHostMemory(t.host());
      }
      r.reply(pinned);
      return;
    }
    if (t.transfer() != 0 && t.from() != 0) {
      throw new CudaException(FailureCode.BAD_REQUEST, "chunk at byte " + t.from() + " of transfer #"
        + t.transfer() + " came before its first chunk");
    }
    GpuEvent done = chunk(h, t);
    if (!t.last()) {
      // The transfer keeps its place for its whole duration: later requests that touch the buffer
      // wait until its last chunk is queued.
      transfers.put(t.transfer(), runtime.loop().hold(r, footprint(t)));
    }
    runtime.replyWhenDone(r, done, () -> h);
  }

  /**
   * The source's side of a copy straight into another context of this process: holds the source's
   * place (later writes to it wait) until the target's side has come and the copy is queued after
   * the source's last write and the target's pending uses.
   */
  private void copyOut(Request r, CopyOutRequest c) throws BackendException {
    BufferHandle s = c.source();
    BufferHandle t = c.target();
    if (s == null || t == null || s.dtype() != t.dtype() || s.length() != t.length()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "source and target must be of one dtype and length");
    }
    runtime.allocations().resolve(s, "source");
    Transfers.checkView(s);
    SubmissionLoop.Hold hold = runtime.loop().hold(r, Footprint.builder().read(s).build());
    long transfer = c.transfer();
    boolean[] settled = new boolean[1];
    long wait = Math.max(1, (r.deadline() - System.nanoTime()) / 1_000_000);
    long timer = runtime.vertx().setTimer(wait, id -> runtime.loop().execute(() -> {
      if (!settled[0]) {
        settled[0] = true;
        PeerCopies.cancel(transfer);
        hold.release();
        r.fail(new CudaException(FailureCode.TIMEOUT, "copy #" + transfer + "'s target never came"));
      }
    }));
    PeerCopies.source(transfer, target -> runtime.loop().execute(() -> {
      if (settled[0]) {
        target.pendingUses().forEach(GpuEvent::release);
        target.failed().accept(new CudaException(FailureCode.TIMEOUT, "copy #" + transfer + "'s source gave up"));
        return;
      }
      settled[0] = true;
      runtime.vertx().cancelTimer(timer);
      if (target.refused() != null) {
        hold.release();
        r.fail(target.refused());
        return;
      }
      if (!target.claim()) {
        // The target gave its place up meanwhile (its deadline, an abort): writing it now could land
        // after later uses of it, or in memory freed since.
        target.pendingUses().forEach(GpuEvent::release);
        hold.release();
        r.fail(new CudaException(FailureCode.TIMEOUT, "copy #" + transfer + "'s target gave up before the copy began"));
        return;
      }
      try {
        Allocation src = runtime.allocations().resolve(s, "source");
        if (!device.canCopyToPeer(target.runtime().device())) {
          throw new CudaException(FailureCode.UNSUPPORTED, "device " + s.device() + " cannot copy into device " + t.device());
        }
        GpuEvent done = runtime.ordering().run(stream, List.of(src), List.of(), () -> {
          for (GpuEvent use : target.pendingUses()) {
            device.await(stream, use);
          }
          device.copyToPeer(stream, src.memory(), s.byteOffset(), target.runtime().device(), target.memory().memory(),
            target.handle().byteOffset(), s.byteLength());
        });
        target.written().accept(done.retain());
        runtime.replyWhenDone(r, done, () -> t);
      } catch (Throwable e) {
        CudaException failure = runtime.failure(e);
        target.failed().accept(failure);
        r.fail(failure);
      } finally {
        target.pendingUses().forEach(GpuEvent::release);
        hold.release();
      }
    }));
  }

  /** Serves a chunk of a copy from another device; on the submission thread, outside the order. */
  void copyInChunk(Request r) {
    try {
      copyIns.chunk(r);
    } catch (Throwable e) {
      r.fail(runtime.failure(e));
    }
  }

  /**
   * Serves a chunk after the first of a transfer in chunks; on the submission thread, outside the
   * order (its transfer holds its place).
   */
  void continueTransfer(Request r) {
    TransferRequest t = (TransferRequest) r.body();
    SubmissionLoop.Hold hold = transfers.get(t.transfer());
    try {
      if (hold == null) {
        throw new CudaException(FailureCode.BAD_REQUEST, "transfer #" + t.transfer() + " is not in progress");
      }
      GpuEvent done;
      try {
        done = chunk(t.handle(), t);
      } finally {
        if (t.last()) {
          transfers.remove(t.transfer());
          hold.release();
        }
      }
      runtime.replyWhenDone(r, done, t::handle);
    } catch (Throwable e) {
      if (hold != null && !t.last()) {
        transfers.remove(t.transfer());
        hold.release();
      }
      r.fail(runtime.failure(e));
    }
  }

  // One piece of a transfer: bytes [from, from + host.remaining()) of the view {@code h}.
  private GpuEvent chunk(BufferHandle h, TransferRequest t) throws BackendException {
    Allocation a = runtime.allocations().resolve(h, "handle");
    Transfers.checkView(h);
    long bytes = t.host().remaining();
    if (t.from() < 0 || bytes > h.byteLength() - t.from() || t.transfer() == 0 && bytes != h.byteLength()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "host memory has " + bytes + " bytes at " + t.from()
        + "; the handle's view has " + h.byteLength());
    }
    long at = h.byteOffset() + t.from();
    return t.direction() == TransferRequest.Direction.TO_DEVICE
      ? runtime.ordering().run(stream, List.of(), List.of(a), () -> device.copyHostToDevice(stream, t.host(), a.memory(), at))
      : runtime.ordering().run(stream, List.of(a), List.of(), () -> device.copyDeviceToHost(stream, a.memory(), at, t.host()));
  }

  private GpuEvent toDevice(BufferHandle h, ByteBuffer src) throws BackendException {
    Allocation a = runtime.allocations().resolve(h, "handle");
    Transfers.checkUpload(h, src.remaining());
    return runtime.ordering().run(stream, List.of(), List.of(a),
      () -> device.copyHostToDevice(stream, src, a.memory(), h.byteOffset()));
  }

  private GpuEvent toHost(BufferHandle h, ByteBuffer dst) throws BackendException {
    Allocation a = runtime.allocations().resolve(h, "handle");
    Transfers.checkDownload(h, dst.remaining());
    return runtime.ordering().run(stream, List.of(a), List.of(),
      () -> device.copyDeviceToHost(stream, a.memory(), h.byteOffset(), dst));
  }

  private void copy(Request r, CopyRequest c) throws BackendException {
    BufferHandle s = c.getSource();
    BufferHandle t = c.getTarget();
    Allocation[] ends = copyEnds(c);
    Allocation src = ends[0];
    Allocation dst = ends[1];
    GpuEvent done = runtime.ordering().run(stream, List.of(src), List.of(dst),
      () -> device.copyDeviceToDevice(stream, src.memory(), s.byteOffset(), dst.memory(), t.byteOffset(), s.byteLength()));
    runtime.replyWhenDone(r, done, () -> t);
  }

  /** Fills and device-to-device copies can be steps of a recorded pipeline; they go on the copy stream. */
  @Override
  public com.vertxcuda.device.spi.RecordedStep record(Object body) {
    if (body instanceof FillRequest) {
      FillRequest f = (FillRequest) body;
      BufferHandle h = f.getHandle();
      Allocation a = runtime.allocations().resolve(h, "handle");
      long bits = fillBits(h, f);
      int size = h.dtype().size();
      return step(List.of(), List.of(a), () -> device.fill(stream, a.memory(), h.byteOffset(), h.length(), size, bits));
    }
    if (body instanceof CopyRequest) {
      CopyRequest c = (CopyRequest) body;
      Allocation[] ends = copyEnds(c);
      BufferHandle s = c.getSource();
      BufferHandle t = c.getTarget();
      return step(List.of(ends[0]), List.of(ends[1]), () -> device.copyDeviceToDevice(stream, ends[0].memory(),
        s.byteOffset(), ends[1].memory(), t.byteOffset(), s.byteLength()));
    }
    throw new CudaException(FailureCode.BAD_REQUEST, (body == null ? "an empty message" : body.getClass().getSimpleName())
      + " cannot be recorded: the device records fills and device-to-device copies (uploads and downloads move "
      + "host memory that a replay does not have; allocations and frees change what the pipeline uses)");
  }

  private com.vertxcuda.device.spi.RecordedStep step(List<Allocation> reads, List<Allocation> writes,
                                                     com.vertxcuda.device.spi.LibraryContext.Work work) {
    GpuStream on = stream;
    return new com.vertxcuda.device.spi.RecordedStep() {
      @Override public GpuStream stream() { return on; }
      @Override public List<Allocation> reads() { return reads; }
      @Override public List<Allocation> writes() { return writes; }
      @Override public void issue() throws BackendException { work.enqueue(); }
    };
  }

  /** A device-to-device copy's two buffers, checked (one dtype and length, no overlap): the one place for requests and recorded steps. */
  private Allocation[] copyEnds(CopyRequest c) {
    BufferHandle s = c.getSource();
    BufferHandle t = c.getTarget();
    Allocation src = runtime.allocations().resolve(s, "source");
    Allocation dst = runtime.allocations().resolve(t, "target");
    if (s.dtype() != t.dtype() || s.length() != t.length()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "source is " + s.length() + " " + s.dtype()
        + " but target is " + t.length() + " " + t.dtype());
    }
    if (src == dst && s.offset() < t.offset() + t.length() && t.offset() < s.offset() + s.length()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "source and target overlap");
    }
    return new Allocation[] {src, dst};
  }

  // An IllegalArgumentException for bits the dtype cannot hold: Failures answers it BAD_REQUEST.
  private static long fillBits(BufferHandle h, FillRequest f) {
    return h.dtype().checkBits(f.getBits());
  }

  private void fill(Request r, FillRequest f) throws BackendException {
    BufferHandle h = f.getHandle();
    Allocation a = runtime.allocations().resolve(h, "handle");
    int size = h.dtype().size();
    long bits = fillBits(h, f);
    GpuEvent done = runtime.ordering().run(stream, List.of(), List.of(a),
      () -> device.fill(stream, a.memory(), h.byteOffset(), h.length(), size, bits));
    runtime.replyWhenDone(r, done, () -> h);
  }

  private DeviceStats stats() throws BackendException {
    long[] mem = device.memoryInfo();
    AllocationTable table = runtime.allocations();
    return new DeviceStats()
      .setGeneration(runtime.generation())
      .setBytesAllocated(table.liveBytes())
      .setBuffersAllocated(table.liveBuffers())
      .setLibraryBytes(table.libraryBytes())
      .setOwnerBytes(table.ownerBytes())
      .setCachedBytes(device.cachedBytes())
      .setBackendFreeBytes(mem[0])
      .setBackendTotalBytes(mem[1]);
  }

  DeviceInfo describe() throws BackendException {
    long total = device.memoryInfo()[1];
    long limit = runtime.options().getMemoryLimit();
    List<String> libraries = new ArrayList<>();
    runtime.loop().registered().forEach(l -> libraries.add(l.suffix()));
    return new DeviceInfo()
      .setNode(runtime.node())
      .setDevice(runtime.deviceIndex())
      .setName(device.deviceName())
      .setBackend(runtime.backend())
      .setComputeCapability(device.computeCapability())
      .setTotalMemory(limit > 0 ? Math.min(limit, total) : total)
      .setGeneration(runtime.generation())
      .setPid(ProcessHandle.current().pid())
      .setLibraries(libraries);
  }

  private void fault(Request r, FaultRequest f) throws BackendException {
    if (!runtime.options().isFaultInjection() || !(device instanceof FaultInjection)) {
      throw new CudaException(FailureCode.UNSUPPORTED, "fault injection needs DeviceOptions.faultInjection");
    }
    if (f.getKind() == null) {
      throw new CudaException(FailureCode.BAD_REQUEST, "kind is missing");
    }
    FaultInjection faults = (FaultInjection) device;
    switch (f.getKind()) {
      case POISON:
        faults.poison(stream);
        runtime.replyWhenDone(r, device.record(stream), () -> f);
        break;
      case FAIL_NEXT_ALLOCATION:
        faults.failNextAllocation();
        r.reply(f);
        break;
      case FAIL_NEXT_OPERATION:
        faults.failNextOperation();
        r.reply(f);
        break;
      default:
        // A hung kernel: the submission thread waits on it until the context is closed.
        LOG.log(System.Logger.Level.WARNING, "context generation " + runtime.generation() + " stalled on request");
        faults.stall(stream, runtime.loop()::isRunning);
        r.fail(new CudaException(FailureCode.CONTEXT_LOST, "the context was stalled on request and closed"));
    }
  }
}
