package com.vertxcuda.device.host;

import com.vertxcuda.FailureCode;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.DeviceMemory;
import com.vertxcuda.device.spi.FaultInjection;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.internal.CopyThreads;

import java.nio.ByteBuffer;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/** A host "device": memory is direct byte buffers, streams are single-thread executors. */
final class HostContext implements DeviceContext, FaultInjection {

  static final String POISON_REASON = "CUDA_ERROR_ILLEGAL_ADDRESS (injected by the host backend)";

  private final int device;
  private final long totalMemory;
  private final AtomicLong used = new AtomicLong();
  private final List<HostStream> streams = new CopyOnWriteArrayList<>();
  private volatile boolean poisoned;
  private volatile boolean failNextAllocation;
  private volatile boolean failNextOperation;
  /** The failure the next recorded event reports: the operation queued before it was dropped. */
  private volatile BackendException pendingFailure;

  HostContext(int device, long totalMemory) {
    this.device = device;
    this.totalMemory = totalMemory;
  }

  @Override
  public String deviceName() {
    return "host";
  }

  @Override
  public String computeCapability() {
    return "";
  }

  @Override
  public long[] memoryInfo() throws BackendException {
    checkAlive();
    return new long[] {totalMemory - used.get(), totalMemory};
  }

  @Override
  public void bindCurrentThread() throws BackendException {
    checkAlive();
  }

  @Override
  public DeviceMemory allocate(long bytes) throws BackendException {
    checkAlive();
    if (failNextAllocation) {
      failNextAllocation = false;
      throw BackendException.of(FailureCode.OUT_OF_MEMORY, "out of memory (injected by the host backend)");
    }
    if (bytes > Integer.MAX_VALUE) {
      throw BackendException.of(FailureCode.OUT_OF_MEMORY, "the host backend holds at most 2 GiB per buffer, asked " + bytes);
    }
    if (used.addAndGet(bytes) > totalMemory) {
      used.addAndGet(-bytes);
      throw BackendException.of(FailureCode.OUT_OF_MEMORY, bytes + " bytes do not fit: "
        + (totalMemory - used.get()) + " of " + totalMemory + " free");
    }
    try {
      return new HostMemory(ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.LITTLE_ENDIAN));
    } catch (OutOfMemoryError e) {
      // Not counted after all; Failures answers the error OUT_OF_MEMORY.
      used.addAndGet(-bytes);
      throw e;
    }
  }

  @Override
  public void release(DeviceMemory memory) {
    used.addAndGet(-memory.size());
  }

  @Override
  public long cachedBytes() {
    return 0;
  }

  @Override
  public GpuStream createStream(String name) throws BackendException {
    checkAlive();
    HostStream s = new HostStream("vertx-cuda-host-" + device + "-" + name);
    streams.add(s);
    return s;
  }

  @Override
  public GpuEvent record(GpuStream stream) throws BackendException {
    return record(stream, false);
  }

  // A marker after the work queued so far; {@code timed}: it notes when the stream's thread reached it.
  private GpuEvent record(GpuStream stream, boolean timed) throws BackendException {
    checkAlive();
    HostEvent e = new HostEvent(stream);
    e.failure = pendingFailure;
    pendingFailure = null;
    ((HostStream) stream).executor.execute(timed ? () -> {
      e.reached = System.nanoTime();
      e.done.complete(null);
    } : () -> e.done.complete(null));
    return e;
  }

  /** A marker that notes, on the stream's thread, when the stream reached it. */
  @Override
  public GpuEvent recordTimed(GpuStream stream) throws BackendException {
    return record(stream, true);
  }

  /** The stream's thread's clock between the two markers: the work queued between them, as it ran. */
  @Override
  public long elapsedNanos(GpuEvent from, GpuEvent to) {
    long a = ((HostEvent) from).reached;
    long b = ((HostEvent) to).reached;
    return a < 0 || b < 0 ? -1 : b - a;
  }

  @Override
  public long reachedNanos(GpuEvent event) {
    return ((HostEvent) event).reached;
  }

  @Override
  public void await(GpuStream stream, GpuEvent event) throws BackendException {
    checkAlive();
    CompletableFuture<Void> done = ((HostEvent) event).done;
    ((HostStream) stream).executor.execute(done::join);
  }

  @Override
  public CompletableFuture<Void> whenComplete(GpuEvent event) {
    HostEvent e = (HostEvent) event;
    return e.done.thenCompose(v -> poisoned
      ? CompletableFuture.failedFuture(BackendException.sticky(POISON_REASON))
      : e.failure != null ? CompletableFuture.failedFuture(e.failure) : CompletableFuture.completedFuture(null));
  }

  @Override
  public void copyHostToDevice(GpuStream stream, ByteBuffer src, DeviceMemory dst, long dstOffset) throws BackendException {
    ByteBuffer from = src.duplicate();
    enqueue(stream, () -> CopyThreads.copy(from, slice(dst, dstOffset, from.remaining())));
  }

  @Override
  public void copyDeviceToHost(GpuStream stream, DeviceMemory src, long srcOffset, ByteBuffer dst) throws BackendException {
    ByteBuffer to = dst.duplicate();
    enqueue(stream, () -> CopyThreads.copy(slice(src, srcOffset, to.remaining()), to));
  }

  @Override
  public void copyDeviceToDevice(GpuStream stream, DeviceMemory src, long srcOffset, DeviceMemory dst, long dstOffset,
                                 long bytes) throws BackendException {
    enqueue(stream, () -> CopyThreads.copy(slice(src, srcOffset, bytes), slice(dst, dstOffset, bytes)));
  }

  /** Another host context of this process: its memory is this process's memory too. */
  @Override
  public boolean canCopyToPeer(DeviceContext peer) {
    return peer instanceof HostContext && peer != this;
  }

  @Override
  public void copyToPeer(GpuStream stream, DeviceMemory src, long srcOffset, DeviceContext peer, DeviceMemory dst,
                         long dstOffset, long bytes) throws BackendException {
    if (((HostContext) peer).poisoned) {
      throw BackendException.of(FailureCode.CONTEXT_LOST, "the peer context is poisoned");
    }
    enqueue(stream, () -> CopyThreads.copy(slice(src, srcOffset, bytes), slice(dst, dstOffset, bytes)));
  }

  @Override
  public void fill(GpuStream stream, DeviceMemory dst, long byteOffset, long count, int elementSize, long bits)
    throws BackendException {
    enqueue(stream, () -> {
      ByteBuffer b = slice(dst, byteOffset, count * elementSize);
      // One pattern block, then bulk copies of it: a byte loop over a large buffer is slow.
      ByteBuffer pattern = ByteBuffer.allocate((int) Math.min(b.remaining(), FILL_BLOCK)).order(b.order());
      if (bits != 0) {
        while (pattern.hasRemaining()) {
          switch (elementSize) {
            case 1: pattern.put((byte) bits); break;
            case 2: pattern.putShort((short) bits); break;
            case 4: pattern.putInt((int) bits); break;
            default: pattern.putLong(bits); break;
          }
        }
      }
      while (b.hasRemaining()) {
        b.put(pattern.clear().limit(Math.min(pattern.capacity(), b.remaining())));
      }
    });
  }

  /** Bytes of the pattern a fill copies from: a multiple of every element size. */
  private static final int FILL_BLOCK = 64 << 10;

  @Override
  public void poison(GpuStream stream) throws BackendException {
    enqueue(stream, () -> poisoned = true);
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
  public void stall(GpuStream stream, BooleanSupplier keepStalling) {
    while (keepStalling.getAsBoolean()) {
      LockSupport.parkNanos(10_000_000);
    }
  }

  @Override
  public void close(boolean poisoned) {
    streams.forEach(s -> s.executor.shutdownNow());
    streams.clear();
  }

  /** Direct access for the host library engines, which compute on the stream's thread. */
  static ByteBuffer slice(DeviceMemory memory, long byteOffset, long bytes) {
    ByteBuffer b = ((HostMemory) memory).buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    b.position((int) byteOffset).limit((int) (byteOffset + bytes));
    return b.slice().order(ByteOrder.LITTLE_ENDIAN);
  }

  /** Queues {@code work} on a stream; a poisoned stream skips it, as a GPU would after a sticky error. */
  void enqueue(GpuStream stream, Runnable work) throws BackendException {
    checkAlive();
    if (failNextOperation) {
      failNextOperation = false;
      pendingFailure = BackendException.of(FailureCode.LIBRARY_ERROR,
        "the operation failed (injected by the host backend); the device is healthy");
      return;
    }
    ((HostStream) stream).executor.execute(() -> {
      if (!poisoned) {
        work.run();
      }
    });
  }

  private void checkAlive() throws BackendException {
    if (poisoned) {
      throw BackendException.sticky(POISON_REASON);
    }
  }

  static final class HostStream implements GpuStream {
    final String name;
    final ExecutorService executor;

    HostStream(String name) {
      this.name = name;
      this.executor = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
      });
    }

    @Override
    public String name() {
      return name;
    }
  }

  static final class HostEvent implements GpuEvent {
    final GpuStream stream;
    final CompletableFuture<Void> done = new CompletableFuture<>();
    volatile BackendException failure;
    /** When the stream reached a timed marker ({@link #recordTimed}); -1 for a plain one. */
    volatile long reached = -1;

    HostEvent(GpuStream stream) {
      this.stream = stream;
    }

    @Override
    public GpuStream stream() {
      return stream;
    }

    @Override
    public boolean isComplete() {
      return done.isDone();
    }

    @Override
    public GpuEvent retain() {
      return this;
    }

    @Override
    public void release() {
    }
  }

  static final class HostMemory implements DeviceMemory {
    final ByteBuffer buffer;

    HostMemory(ByteBuffer buffer) {
      this.buffer = buffer;
    }

    @Override
    public long size() {
      return buffer.capacity();
    }
  }
}
