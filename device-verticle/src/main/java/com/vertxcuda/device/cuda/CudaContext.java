package com.vertxcuda.device.cuda;

import com.vertxcuda.FailureCode;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.DeviceMemory;
import com.vertxcuda.device.spi.FaultInjection;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.GraphCapture;
import com.vertxcuda.device.spi.HostMemoryRegistration;
import com.vertxcuda.device.memory.LentBuffers;
import io.vertx.core.buffer.Buffer;
import java.util.concurrent.ConcurrentHashMap;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;

/**
 * A device's primary context through the JCuda driver API: non-blocking streams, pooled events,
 * completion seen by a polling thread, a caching allocator over {@code cuMemAlloc}, and copies
 * that go straight from direct buffers or stage heap data through pinned memory.
 *
 * <p>Library verticles reach the CUDA objects behind the SPI with {@link #stream(GpuStream)} and
 * {@link #pointer(DeviceMemory, long)}. After a sticky error no method calls into CUDA again.
 */
public final class CudaContext implements DeviceContext, HostMemoryRegistration, FaultInjection,
  GraphCapture {

  /** Requests up to this size round up to a power of two; larger ones to a multiple of 2 MiB. */
  static final long SMALL_LIMIT = 1 << 20;
  static final long LARGE_ROUND = 2 << 20;

  private final int ordinal;
  private final CUdevice device;
  private final CUcontext context;
  private final String name;
  private final String computeCapability;
  private final String pciBusId;
  private final CompletionPoller poller;
  private final PinnedMemory pinned;
  private final ConcurrentLinkedQueue<CUevent> idleEvents = new ConcurrentLinkedQueue<>();
  /** Idle events created with timing on, for {@link #recordTimed}. */
  private final ConcurrentLinkedQueue<CUevent> idleTimedEvents = new ConcurrentLinkedQueue<>();
  private final List<CudaStream> streams = new CopyOnWriteArrayList<>();
  private final List<ByteBuffer> registered = new CopyOnWriteArrayList<>();
  private final Map<Long, ArrayDeque<CUdeviceptr>> cache = new HashMap<>();
  private long cachedBytes;
  private long inUseBytes;
  private boolean closed;
  private final FaultKernels faults = new FaultKernels();
  private volatile boolean failNextAllocation;
  private volatile boolean failNextOperation;

  private CudaContext(int ordinal, CUdevice device, CUcontext context, String name, String computeCapability,
    String pciBusId, long spinNanos) throws BackendException {
    this.ordinal = ordinal;
    this.device = device;
    this.context = context;
    this.name = name;
    this.computeCapability = computeCapability;
    this.pciBusId = pciBusId;
    this.pinned = PinnedMemory.shared(ordinal);
    this.poller = new CompletionPoller(context, "vertx-cuda-completion-" + ordinal, spinNanos);
  }

  /**
   * Retains device {@code ordinal}'s primary context and makes it current on the calling thread; its
   * completion thread waits as {@link com.vertxcuda.device.spi.IdleWait} says with {@code spinNanos}.
   */
  static CudaContext open(int ordinal, long spinNanos) throws BackendException {
    CudaErrors.checkAlive();
    CUdevice dev = new CUdevice();
    CudaErrors.check(JCudaDriver.cuDeviceGet(dev, ordinal), "cuDeviceGet(" + ordinal + ")");
    CUcontext ctx = new CUcontext();
    CudaErrors.check(JCudaDriver.cuDevicePrimaryCtxRetain(ctx, dev), "cuDevicePrimaryCtxRetain");
    CudaErrors.check(JCudaDriver.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    byte[] raw = new byte[256];
    CudaErrors.check(JCudaDriver.cuDeviceGetName(raw, raw.length, dev), "cuDeviceGetName");
    int end = 0;
    while (end < raw.length && raw[end] != 0) {
      end++;
    }
    int[] major = new int[1];
    int[] minor = new int[1];
    CudaErrors.check(JCudaDriver.cuDeviceGetAttribute(major, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cuDeviceGetAttribute");
    CudaErrors.check(JCudaDriver.cuDeviceGetAttribute(minor, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cuDeviceGetAttribute");
    String[] busId = new String[1];
    CudaErrors.check(JCudaDriver.cuDeviceGetPCIBusId(busId, 32, dev), "cuDeviceGetPCIBusId");
    return new CudaContext(ordinal, dev, ctx, new String(raw, 0, end, StandardCharsets.UTF_8), major[0] + "." + minor[0],
      busId[0] == null ? "" : busId[0].trim(), spinNanos);
  }

  // ---- what library verticles need ----

  /** The CUDA stream behind {@code stream} (for cuBLAS, cuFFT, cuRAND, kernel launches). */
  public CUstream stream(GpuStream stream) {
    return ((CudaStream) stream).handle;
  }

  /** The device address {@code byteOffset} bytes into {@code memory}. */
  public CUdeviceptr pointer(DeviceMemory memory, long byteOffset) {
    CUdeviceptr base = ((CudaMemory) memory).pointer;
    return byteOffset == 0 ? base : base.withByteOffset(byteOffset);
  }

  /** The device address of a byte of {@code memory}, as a number (for pointer arrays). */
  public long address(DeviceMemory memory, long byteOffset) {
    return ((CudaMemory) memory).address + byteOffset;
  }

  /** The primary context (current on every bound thread). */
  public CUcontext cuContext() {
    return context;
  }

  /** The CUDA ordinal of this device. */
  public int ordinal() {
    return ordinal;
  }

  /** An empty Buffer over pinned host memory, of capacity {@code bytes}: fill it, then upload it without a staging copy. */
  public Buffer pinnedBuffer(int bytes) throws BackendException {
    CudaErrors.checkAlive();
    return pinned.buffer(bytes);
  }

  /** The process's pinned host memory pool. */
  public PinnedMemory pinnedMemory() {
    return pinned;
  }

  /** Bytes handed out by the caching allocator and not yet released. */
  public synchronized long inUseBytes() {
    return inUseBytes;
  }

  // ---- DeviceContext ----

  @Override
  public String deviceName() {
    return name;
  }

  @Override
  public String computeCapability() {
    return computeCapability;
  }

  @Override
  public String pciBusId() {
    return pciBusId;
  }

  @Override
  public long[] memoryInfo() throws BackendException {
    CudaErrors.checkAlive();
    long[] free = new long[1];
    long[] total = new long[1];
    CudaErrors.check(JCudaDriver.cuMemGetInfo(free, total), "cuMemGetInfo");
    return new long[] {free[0], total[0]};
  }

  @Override
  public void bindCurrentThread() throws BackendException {
    CudaErrors.checkAlive();
    CudaErrors.check(JCudaDriver.cuCtxSetCurrent(context), "cuCtxSetCurrent");
  }

  @Override
  public synchronized DeviceMemory allocate(long bytes) throws BackendException {
    CudaErrors.checkAlive();
    if (failNextAllocation) {
      failNextAllocation = false;
      refusedAllocation();
    }
    long size = sizeClass(bytes);
    ArrayDeque<CUdeviceptr> free = cache.get(size);
    if (free != null && !free.isEmpty()) {
      cachedBytes -= size;
      inUseBytes += size;
      return new CudaMemory(free.pop(), size);
    }
    CUdeviceptr p = new CUdeviceptr();
    int r = JCudaDriver.cuMemAlloc(p, size);
    if (r == CUresult.CUDA_ERROR_OUT_OF_MEMORY && cachedBytes > 0) {
      emptyCache();
      r = JCudaDriver.cuMemAlloc(p, size);
    }
    if (r == CUresult.CUDA_ERROR_OUT_OF_MEMORY) {
      long[] info = memoryInfo();
      throw BackendException.of(FailureCode.OUT_OF_MEMORY, bytes + " bytes do not fit on " + name + ": "
        + info[0] + " of " + info[1] + " bytes free (cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY)");
    }
    CudaErrors.check(r, "cuMemAlloc of " + size + " bytes");
    inUseBytes += size;
    return new CudaMemory(p, size);
  }

  /** Keeps the block for reuse: the caller guarantees every use of it has completed. */
  @Override
  public synchronized void release(DeviceMemory memory) {
    CudaMemory m = (CudaMemory) memory;
    inUseBytes -= m.size();
    if (closed) {
      return;
    }
    cache.computeIfAbsent(m.size(), k -> new ArrayDeque<>()).push(m.pointer);
    cachedBytes += m.size();
  }

  @Override
  public synchronized long cachedBytes() {
    return cachedBytes;
  }

  /** Frees every cached block. */
  public synchronized void emptyCache() throws BackendException {
    CudaErrors.checkAlive();
    for (Map.Entry<Long, ArrayDeque<CUdeviceptr>> e : cache.entrySet()) {
      for (CUdeviceptr p; (p = e.getValue().poll()) != null; ) {
        cachedBytes -= e.getKey();
        CudaErrors.check(JCudaDriver.cuMemFree(p), "cuMemFree");
      }
    }
  }

  static long sizeClass(long bytes) {
    if (bytes <= SMALL_LIMIT) {
      long size = 512;
      while (size < bytes) {
        size <<= 1;
      }
      return size;
    }
    return (bytes + LARGE_ROUND - 1) / LARGE_ROUND * LARGE_ROUND;
  }

  @Override
  public GpuStream createStream(String name) throws BackendException {
    CudaErrors.checkAlive();
    CudaErrors.check(JCudaDriver.cuCtxSetCurrent(context), "cuCtxSetCurrent");
    CUstream s = new CUstream();
    CudaErrors.check(JCudaDriver.cuStreamCreate(s, CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    CudaStream stream = new CudaStream(s, name);
    streams.add(stream);
    return stream;
  }

  @Override
  public GpuEvent record(GpuStream stream) throws BackendException {
    return record(stream, false);
  }

  // An event from its pool (timing disabled, or on), recorded after the work queued on {@code stream}.
  private GpuEvent record(GpuStream stream, boolean timed) throws BackendException {
    CudaErrors.checkAlive();
    java.util.Queue<CUevent> idle = timed ? idleTimedEvents : idleEvents;
    CUevent e = idle.poll();
    if (e == null) {
      e = new CUevent();
      CudaErrors.check(JCudaDriver.cuEventCreate(e, timed ? CUevent_flags.CU_EVENT_DEFAULT
        : CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    }
    int r = JCudaDriver.cuEventRecord(e, stream(stream));
    if (r != CUresult.CUDA_SUCCESS) {
      idle.add(e);
      throw CudaErrors.failure(r, "cuEventRecord");
    }
    return new CudaEvent(this, e, (CudaStream) stream, timed);
  }

  /**
   * An event with timing on (a pool of its own: the plain ones have timing disabled, which keeps
   * their record and query cheap), read by {@link #elapsedNanos}.
   */
  @Override
  public GpuEvent recordTimed(GpuStream stream) throws BackendException {
    return record(stream, true);
  }

  /** The GPU's time between two complete timed events ({@code cuEventElapsedTime}, about half a microsecond's resolution). */
  @Override
  public long elapsedNanos(GpuEvent from, GpuEvent to) {
    if (!(from instanceof CudaEvent) || !(to instanceof CudaEvent) || !((CudaEvent) from).timed
      || !((CudaEvent) to).timed || CudaErrors.poisonedBy() != null) {
      return -1;
    }
    float[] ms = new float[1];
    int r = JCudaDriver.cuEventElapsedTime(ms, ((CudaEvent) from).handle, ((CudaEvent) to).handle);
    return r == CUresult.CUDA_SUCCESS ? Math.round(ms[0] * 1e6) : -1;
  }

  void recycle(CUevent e, boolean timed) {
    (timed ? idleTimedEvents : idleEvents).add(e);
  }

  void recycle(CUevent e) {
    idleEvents.add(e);
  }

  @Override
  public void await(GpuStream stream, GpuEvent event) throws BackendException {
    CudaErrors.checkAlive();
    CudaErrors.check(JCudaDriver.cuStreamWaitEvent(stream(stream), ((CudaEvent) event).handle, 0), "cuStreamWaitEvent");
  }

  @Override
  public CompletableFuture<Void> whenComplete(GpuEvent event) {
    String poisoned = CudaErrors.poisonedBy();
    if (poisoned != null) {
      return CompletableFuture.failedFuture(BackendException.sticky(poisoned));
    }
    return poller.whenComplete((CudaEvent) event);
  }

  /** Pinned memory only: a graph's copy may not stage pageable memory. */
  @Override
  public LentBuffers.Hold holdHostMemory(Buffer host) {
    return PinnedMemory.isPinned(host) ? LentBuffers.hold(host) : null;
  }

  @Override
  public Buffer hostBuffer(int bytes) throws BackendException {
    CudaErrors.checkAlive();
    return pinned.filledBuffer(bytes);
  }

  @Override
  public Buffer idleHostBuffer(int bytes) {
    return pinned.idleFilledBuffer(bytes);
  }

  @Override
  public boolean releaseHostBuffer(Buffer buffer) {
    return PinnedMemory.release(buffer);
  }

  /** Page-locks {@code memory} (a direct buffer this context did not allocate) until the context closes. */
  @Override
  public void registerHostMemory(ByteBuffer memory) throws BackendException {
    CudaErrors.checkAlive();
    if (!memory.isDirect()) {
      throw BackendException.of(FailureCode.BAD_REQUEST, "only direct memory can be page-locked");
    }
    ByteBuffer whole = memory.slice();
    CudaErrors.check(JCudaDriver.cuMemHostRegister(Pointer.to(whole), whole.capacity(),
      JCudaDriver.CU_MEMHOSTREGISTER_PORTABLE), "cuMemHostRegister of " + whole.capacity() + " bytes");
    registered.add(whole);
  }

  @Override
  public void copyHostToDevice(GpuStream stream, ByteBuffer src, DeviceMemory dst, long dstOffset) throws BackendException {
    CudaErrors.checkAlive();
    injectedFailure(stream);
    long n = src.remaining();
    if (n == 0) {
      return;
    }
    if (src.isDirect()) {
      // Pinned memory goes by DMA at once; the driver stages pageable memory itself.
      CudaErrors.check(JCudaDriver.cuMemcpyHtoDAsync(pointer(dst, dstOffset), Pointer.to(src.slice()), n, stream(stream)),
        "cuMemcpyHtoDAsync");
      return;
    }
    stagedUpload(stream, src, dst, dstOffset);
  }

  /**
   * A small upload from the Java heap (the device tier prepares larger ones into pinned memory off
   * the submission thread, and the one pump splits what is larger still): through one pinned
   * block, returned once the copy has read it.
   */
  private void stagedUpload(GpuStream stream, ByteBuffer src, DeviceMemory dst, long dstOffset) throws BackendException {
    int n = src.remaining();
    PinnedMemory.Lease block = pinned.lease(n);
    CudaEvent read = null;
    try {
      block.view(block.size).put(src.duplicate());
      CudaErrors.check(JCudaDriver.cuMemcpyHtoDAsync(pointer(dst, dstOffset), block.pointer, n, stream(stream)),
        "cuMemcpyHtoDAsync");
      read = (CudaEvent) record(stream);
    } finally {
      returnAfter(read, block);
    }
  }

  /** Returns {@code block} to the pool once {@code use} is reached (at once without one). */
  private void returnAfter(CudaEvent use, PinnedMemory.Lease block) {
    if (block == null) {
      return;
    }
    if (use == null) {
      block.close();
      return;
    }
    whenComplete(use).whenComplete((v, t) -> {
      use.release();
      if (t == null) {
        block.close();
      }
    });
  }

  /**
   * Queues a copy into {@code dst}. Direct buffers are written by DMA (pinned memory asynchronously;
   * for pageable memory the driver returns only when the copy is done). A heap buffer blocks this
   * thread until its data is there: the device tier always downloads into {@link #hostBuffer}.
   */
  @Override
  public void copyDeviceToHost(GpuStream stream, DeviceMemory src, long srcOffset, ByteBuffer dst) throws BackendException {
    CudaErrors.checkAlive();
    injectedFailure(stream);
    long n = dst.remaining();
    if (n == 0) {
      return;
    }
    if (dst.isDirect()) {
      CudaErrors.check(JCudaDriver.cuMemcpyDtoHAsync(Pointer.to(dst.slice()), pointer(src, srcOffset), n, stream(stream)),
        "cuMemcpyDtoHAsync");
      return;
    }
    // Small (the device tier downloads into pinned memory): through one pinned block, waited for here.
    try (PinnedMemory.Lease block = pinned.lease(n)) {
      CudaErrors.check(JCudaDriver.cuMemcpyDtoHAsync(block.pointer, pointer(src, srcOffset), n, stream(stream)),
        "cuMemcpyDtoHAsync");
      CudaErrors.check(JCudaDriver.cuStreamSynchronize(stream(stream)), "cuStreamSynchronize");
      dst.duplicate().put(block.view(block.size).limit((int) n));
    }
  }

  @Override
  public void copyDeviceToDevice(GpuStream stream, DeviceMemory src, long srcOffset, DeviceMemory dst, long dstOffset,
                                 long bytes) throws BackendException {
    CudaErrors.checkAlive();
    injectedFailure(stream);
    if (bytes == 0) {
      return;
    }
    CudaErrors.check(JCudaDriver.cuMemcpyDtoDAsync(pointer(dst, dstOffset), pointer(src, srcOffset), bytes, stream(stream)),
      "cuMemcpyDtoDAsync");
  }

  /**
   * Peers whose memory this context may copy into, with whether the devices reach each other
   * directly (peer access enabled) or the driver stages the copy through host memory.
   */
  private final Map<CudaContext, Boolean> peers = new ConcurrentHashMap<>();

  /**
   * Another cuda context of this process: {@code cuMemcpyPeerAsync} copies into it either way, so
   * this is true; where {@code cuDeviceCanAccessPeer} allows, peer access is enabled (once, from
   * this context, current on the calling thread) so the copy goes directly over NVLink or PCIe.
   * Not exercised on a machine with one GPU.
   */
  @Override
  public boolean canCopyToPeer(DeviceContext peer) {
    if (!(peer instanceof CudaContext) || peer == this) {
      return false;
    }
    CudaContext other = (CudaContext) peer;
    peers.computeIfAbsent(other, p -> {
      int[] can = new int[1];
      if (JCudaDriver.cuDeviceCanAccessPeer(can, device, p.device) != CUresult.CUDA_SUCCESS || can[0] == 0) {
        return false;
      }
      int r = JCudaDriver.cuCtxEnablePeerAccess(p.context, 0);
      return r == CUresult.CUDA_SUCCESS || r == CUresult.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    });
    return true;
  }

  @Override
  public void copyToPeer(GpuStream stream, DeviceMemory src, long srcOffset, DeviceContext peer, DeviceMemory dst,
                         long dstOffset, long bytes) throws BackendException {
    CudaErrors.checkAlive();
    injectedFailure(stream);
    if (bytes == 0) {
      return;
    }
    CudaContext other = (CudaContext) peer;
    CudaErrors.check(JCudaDriver.cuMemcpyPeerAsync(other.pointer(dst, dstOffset), other.context,
      pointer(src, srcOffset), context, bytes, stream(stream)), "cuMemcpyPeerAsync");
  }

  @Override
  public void fill(GpuStream stream, DeviceMemory dst, long byteOffset, long count, int elementSize, long bits)
    throws BackendException {
    CudaErrors.checkAlive();
    injectedFailure(stream);
    if (count == 0) {
      return;
    }
    CUdeviceptr p = pointer(dst, byteOffset);
    CUstream s = stream(stream);
    switch (elementSize) {
      case 1:
        CudaErrors.check(JCudaDriver.cuMemsetD8Async(p, (byte) bits, count, s), "cuMemsetD8Async");
        break;
      case 2:
        CudaErrors.check(JCudaDriver.cuMemsetD16Async(p, (short) bits, count, s), "cuMemsetD16Async");
        break;
      case 4:
        CudaErrors.check(JCudaDriver.cuMemsetD32Async(p, (int) bits, count, s), "cuMemsetD32Async");
        break;
      case 8:
        // Two strided 32-bit fills: low words at offset 0, high words at offset 4, pitch 8 bytes.
        CudaErrors.check(JCudaDriver.cuMemsetD2D32Async(p, 8, (int) bits, 1, count, s), "cuMemsetD2D32Async");
        CudaErrors.check(JCudaDriver.cuMemsetD2D32Async(p.withByteOffset(4), 8, (int) (bits >>> 32), 1, count, s),
          "cuMemsetD2D32Async");
        break;
      default:
        throw BackendException.of(FailureCode.BAD_REQUEST, "no fill for " + elementSize + "-byte elements");
    }
  }

  // ---- GraphCapture: recorded pipelines as CUDA graphs ----

  @Override
  public Graph capture(GpuStream origin, List<Step> steps) throws BackendException {
    return CudaGraphs.capture(this, origin, steps);
  }

  // ---- FaultInjection: the real faults ----

  @Override
  public void poison(GpuStream stream) throws BackendException {
    CudaErrors.checkAlive();
    faults.poison(stream(stream));
  }

  @Override
  public void failNextAllocation() {
    failNextAllocation = true;
  }

  @Override
  public void failNextOperation() {
    failNextOperation = true;
  }

  @Override
  public void stall(GpuStream stream, BooleanSupplier keepStalling) throws BackendException {
    CudaErrors.checkAlive();
    faults.stall(stream(stream), keepStalling);
  }

  /** An allocation of four times the device's memory, which the driver refuses for real. */
  private void refusedAllocation() throws BackendException {
    long total = memoryInfo()[1];
    CUdeviceptr p = new CUdeviceptr();
    int r = JCudaDriver.cuMemAlloc(p, 4 * total);
    if (r == CUresult.CUDA_SUCCESS) {
      JCudaDriver.cuMemFree(p);
      r = CUresult.CUDA_ERROR_OUT_OF_MEMORY;
    }
    throw CudaErrors.failure(r, "injected: cuMemAlloc of " + 4 * total + " bytes on " + name);
  }

  private void injectedFailure(GpuStream stream) throws BackendException {
    if (failNextOperation) {
      failNextOperation = false;
      throw faults.refusedLaunch(stream(stream));
    }
  }

  @Override
  public void close(boolean poisoned) {
    poller.stop();
    synchronized (this) {
      closed = true;
    }
    if (poisoned || CudaErrors.poisonedBy() != null) {
      return;
    }
    JCudaDriver.cuCtxSetCurrent(context);
    JCudaDriver.cuCtxSynchronize();
    faults.unload();
    synchronized (this) {
      cache.values().forEach(q -> q.forEach(JCudaDriver::cuMemFree));
      cache.clear();
      cachedBytes = 0;
    }
    registered.forEach(b -> JCudaDriver.cuMemHostUnregister(Pointer.to(b)));
    registered.clear();
    streams.forEach(s -> JCudaDriver.cuStreamDestroy(s.handle));
    streams.clear();
    for (CUevent e; (e = idleEvents.poll()) != null; ) {
      JCudaDriver.cuEventDestroy(e);
    }
    for (CUevent e; (e = idleTimedEvents.poll()) != null; ) {
      JCudaDriver.cuEventDestroy(e);
    }
    JCudaDriver.cuDevicePrimaryCtxRelease(device);
  }
}
