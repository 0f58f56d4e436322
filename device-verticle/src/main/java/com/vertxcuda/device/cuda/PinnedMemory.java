package com.vertxcuda.device.cuda;

import com.vertxcuda.device.memory.LentBuffers;
import com.vertxcuda.internal.VertxInternals;
import com.vertxcuda.device.spi.BackendException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.vertx.core.buffer.Buffer;
import java.util.ArrayList;
import java.util.List;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The process's pool of pinned (page-locked, portable) host memory: staging for copies and the
 * memory of pinned {@link Buffer}s. Blocks come in power-of-two sizes from 64 KiB to 1 GiB and are
 * reused; a leased block comes back when its holder releases it or, failing that, when the garbage
 * collector finds its memory unreachable.
 */
public final class PinnedMemory {

  static final int MIN_BLOCK = 64 * 1024;
  static final int MAX_POOLED = 1 << 30;
  /** Idle pinned bytes kept for reuse; past this, returned blocks are freed. */
  static final long IDLE_LIMIT = 4L << 30;

  private static final Cleaner CLEANER = Cleaner.create();
  private static volatile PinnedMemory shared;

  // Pinned buffers keep their own leases: LentBuffers, which hands every lent buffer back, asks
  // this pool about those it did not lend. Registered as the class initialises, before any block
  // is lent.
  static {
    LentBuffers.alsoLentBy(new LentBuffers.Lender() {
      @Override
      public boolean release(Buffer buffer) {
        return PinnedMemory.release(buffer);
      }

      @Override
      public boolean whenReturned(Buffer buffer, Runnable action) {
        return PinnedMemory.whenReturned(buffer, action);
      }

      @Override
      public LentBuffers.Hold hold(Buffer buffer) {
        PinnedByteBuf b = pinnedUnder(buffer);
        // Only the buffer as it was lent (its block, or a view of all of it): a slice's memory is the
        // block's, but its bytes are not all of it, and a slice's capacity is its own length.
        ByteBuf backing = VertxInternals.backing(buffer);
        if (b == null || backing != b && (backing.unwrap() != b || backing.capacity() != b.capacity())
          || b.lease.closed.get() || !b.lease.holds.open()) {
          return null;
        }
        return b.lease.holds.hold(b, b.lease::giveBackOnce);
      }
    });
  }

  private final CUcontext context;
  private final Map<Integer, ConcurrentLinkedDeque<Pointer>> idle = new ConcurrentHashMap<>();
  private final AtomicLong idleBytes = new AtomicLong();
  private final AtomicLong pinnedBytes = new AtomicLong();
  /** Bytes of the blocks lent as transfer buffers and not yet back. */
  private final AtomicLong transferBufferBytes = new AtomicLong();

  private PinnedMemory(CUcontext context) {
    this.context = context;
  }

  /** The pool, created on first use with device {@code device}'s primary context (the memory is portable). */
  static PinnedMemory shared(int device) throws BackendException {
    PinnedMemory p = shared;
    if (p == null) {
      synchronized (PinnedMemory.class) {
        if (shared == null) {
          CudaErrors.checkAlive();
          CUdevice dev = new CUdevice();
          CudaErrors.check(JCudaDriver.cuDeviceGet(dev, device), "cuDeviceGet");
          CUcontext ctx = new CUcontext();
          CudaErrors.check(JCudaDriver.cuDevicePrimaryCtxRetain(ctx, dev), "cuDevicePrimaryCtxRetain");
          shared = new PinnedMemory(ctx);
        }
        p = shared;
      }
    }
    return p;
  }

  /** A pinned block of at least {@code bytes}; give it back once no copy uses it. */
  Lease lease(long bytes) throws BackendException {
    long size = sizeClass(bytes);
    Pointer block = null;
    if (size <= MAX_POOLED) {
      ConcurrentLinkedDeque<Pointer> q = idle.get((int) size);
      block = q == null ? null : q.poll();
      if (block != null) {
        idleBytes.addAndGet(-size);
      }
    }
    if (block == null) {
      block = allocate(size);
    }
    return new Lease(block, size);
  }

  /**
   * An empty Buffer of capacity {@code bytes} over pinned memory: fill it and upload it, and the
   * copy goes straight from it. Release it with {@link #release(Buffer)} (or leave it to the GC).
   */
  public Buffer buffer(int bytes) throws BackendException {
    Lease lease = lease(bytes);
    lease.transferBuffer = true;
    transferBufferBytes.addAndGet(lease.size);
    ByteBuf b = wrap(lease, bytes);
    b.clear();
    return VertxInternals.buffer(b);
  }

  /** A full Buffer of {@code bytes} over an idle pinned block, or null when none is idle. */
  Buffer idleFilledBuffer(int bytes) {
    long size = sizeClass(bytes);
    if (size > MAX_POOLED) {
      return null;
    }
    ConcurrentLinkedDeque<Pointer> q = idle.get((int) size);
    Pointer block = q == null ? null : q.poll();
    if (block == null) {
      return null;
    }
    idleBytes.addAndGet(-size);
    return VertxInternals.buffer(wrap(new Lease(block, size), bytes));
  }

  /** A full Buffer of {@code bytes} over pinned memory (download targets). */
  Buffer filledBuffer(int bytes) throws BackendException {
    return VertxInternals.buffer(wrap(lease(bytes), bytes));
  }

  /**
   * Returns the pinned memory under {@code buffer} to the pool now; false if it is not pinned
   * memory of this pool. The buffer must not be used afterwards.
   */
  public static boolean release(Buffer buffer) {
    ByteBuf b = VertxInternals.byteBuf(buffer);
    while (b != null && !(b instanceof PinnedByteBuf)) {
      ByteBuf inner = b.unwrap();
      b = inner == b ? null : inner;
    }
    if (b == null) {
      return false;
    }
    ((PinnedByteBuf) b).lease.close();
    return true;
  }

  /** Whether {@code buffer} lies in pinned memory of this pool. */
  public static boolean isPinned(Buffer buffer) {
    return pinnedUnder(buffer) != null;
  }

  /**
   * Runs {@code action} once the pinned block under {@code buffer} has returned to the pool, or now
   * if it has already; false, running nothing, if it is not pinned memory of this pool.
   */
  public static boolean whenReturned(Buffer buffer, Runnable action) {
    PinnedByteBuf b = pinnedUnder(buffer);
    if (b == null) {
      return false;
    }
    b.lease.whenClosed(action);
    return true;
  }

  private static PinnedByteBuf pinnedUnder(Buffer buffer) {
    ByteBuf b = VertxInternals.byteBuf(buffer);
    while (b != null && !(b instanceof PinnedByteBuf)) {
      ByteBuf inner = b.unwrap();
      b = inner == b ? null : inner;
    }
    return (PinnedByteBuf) b;
  }

  /** Pinned bytes held by the process (leased and idle). */
  public long pinnedBytes() {
    return pinnedBytes.get();
  }

  /** Pinned bytes idle in the pool. */
  public long idleBytes() {
    return idleBytes.get();
  }

  /**
   * Pinned bytes of this process lent as transfer buffers ({@link #buffer}) and not yet back: 0
   * before the pool is first used. The blocks copies land in or stage through are not counted.
   */
  public static long transferBufferBytes() {
    PinnedMemory p = shared;
    return p == null ? 0 : p.transferBufferBytes.get();
  }

  static long sizeClass(long bytes) {
    if (bytes > MAX_POOLED) {
      return bytes;
    }
    long size = MIN_BLOCK;
    while (size < bytes) {
      size <<= 1;
    }
    return size;
  }

  private ByteBuf wrap(Lease lease, int bytes) {
    ByteBuffer memory = lease.pointer.getByteBuffer(0, bytes);
    PinnedByteBuf buf = new PinnedByteBuf(memory, lease);
    // The GC returns the block when the ByteBuf and every slice of it are gone (slices reach it
    // through unwrap; the NIO buffer JCuda hands out is not what they keep).
    CLEANER.register(buf, lease::close);
    return buf;
  }

  private Pointer allocate(long size) throws BackendException {
    CudaErrors.checkAlive();
    Pointer p = new Pointer();
    CudaErrors.check(JCudaDriver.cuCtxPushCurrent(context), "cuCtxPushCurrent");
    try {
      int r = JCudaDriver.cuMemHostAlloc(p, size, JCudaDriver.CU_MEMHOSTALLOC_PORTABLE);
      if (r == CUresult.CUDA_ERROR_OUT_OF_MEMORY) {
        trim(0);
        r = JCudaDriver.cuMemHostAlloc(p, size, JCudaDriver.CU_MEMHOSTALLOC_PORTABLE);
      }
      CudaErrors.check(r, "cuMemHostAlloc of " + size + " bytes");
    } finally {
      JCudaDriver.cuCtxPopCurrent(new CUcontext());
    }
    pinnedBytes.addAndGet(size);
    return p;
  }

  private void giveBack(Pointer block, long size) {
    if (size <= MAX_POOLED && idleBytes.get() + size <= IDLE_LIMIT) {
      idle.computeIfAbsent((int) size, k -> new ConcurrentLinkedDeque<>()).push(block);
      idleBytes.addAndGet(size);
    } else {
      free(block, size);
    }
  }

  /** Frees idle blocks until at most {@code keep} idle bytes remain. */
  private void trim(long keep) {
    for (Map.Entry<Integer, ConcurrentLinkedDeque<Pointer>> e : idle.entrySet()) {
      for (Pointer p; idleBytes.get() > keep && (p = e.getValue().poll()) != null; ) {
        idleBytes.addAndGet(-e.getKey());
        free(p, e.getKey());
      }
    }
  }

  private void free(Pointer block, long size) {
    pinnedBytes.addAndGet(-size);
    if (CudaErrors.poisonedBy() != null) {
      return;
    }
    if (JCudaDriver.cuCtxPushCurrent(context) == 0) {
      JCudaDriver.cuMemFreeHost(block);
      JCudaDriver.cuCtxPopCurrent(new CUcontext());
    }
  }

  /** One use of a pinned block; closing it (once) returns the block. */
  final class Lease implements AutoCloseable {
    final Pointer pointer;
    final long size;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Holds on a block lent as a buffer (a recorded pipeline's copies): closing it waits for the last. */
    private final LentBuffers.Holds holds = new LentBuffers.Holds();
    /** What runs once the block is back; null when nothing waits for it. */
    private List<Runnable> onClose;
    /** Whether the block was lent as a transfer buffer (counted in {@link #transferBufferBytes}). */
    private boolean transferBuffer;

    Lease(Pointer pointer, long size) {
      this.pointer = pointer;
      this.size = size;
    }

    /** The first {@code bytes} of the block as a ByteBuffer (the lease must outlive it). */
    ByteBuffer view(long bytes) {
      return pointer.getByteBuffer(0, bytes);
    }

    /** Returns the block now, or, while it is held, once the last hold closes. */
    @Override
    public void close() {
      if (holds.release()) {
        giveBackOnce();
      }
    }

    private void giveBackOnce() {
      if (closed.compareAndSet(false, true)) {
        if (transferBuffer) {
          transferBufferBytes.addAndGet(-size);
        }
        giveBack(pointer, size);
        List<Runnable> then;
        synchronized (this) {
          then = onClose;
          onClose = null;
        }
        if (then != null) {
          then.forEach(Runnable::run);
        }
      }
    }

    /** Runs {@code action} once the block is back (now, if it is). */
    void whenClosed(Runnable action) {
      synchronized (this) {
        if (!closed.get()) {
          if (onClose == null) {
            onClose = new ArrayList<>(1);
          }
          onClose.add(action);
          return;
        }
      }
      action.run();
    }
  }

  /** A Netty buffer over a leased pinned block; deallocation returns the block. */
  private static final class PinnedByteBuf extends UnpooledDirectByteBuf {
    final Lease lease;

    PinnedByteBuf(ByteBuffer memory, Lease lease) {
      super(UnpooledByteBufAllocator.DEFAULT, memory, memory.capacity());
      this.lease = lease;
    }

    @Override
    protected void deallocate() {
      super.deallocate();
      lease.close();
    }
  }
}
