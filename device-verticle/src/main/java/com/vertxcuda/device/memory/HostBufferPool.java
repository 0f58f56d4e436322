package com.vertxcuda.device.memory;

import io.vertx.core.buffer.Buffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;

/**
 * Reusable off-heap memory for transfers between the host and a device. Fresh direct memory is
 * costly (the first touch of each page faults, which for hundreds of MiB takes a noticeable fraction of a second),
 * so buffers handed to users come from power-of-two size classes and return to the pool when the
 * user releases them or they become unreachable.
 */
public final class HostBufferPool {

  private static final int MIN_CLASS = 12;
  private static final HostBufferPool SHARED = new HostBufferPool(1L << 31);

  private final long maxPooledBytes;
  private final ArrayDeque<ByteBuffer>[] free;
  private final LentBuffers lent = new LentBuffers();
  private long pooledBytes;

  @SuppressWarnings("unchecked")
  HostBufferPool(long maxPooledBytes) {
    this.maxPooledBytes = maxPooledBytes;
    this.free = new ArrayDeque[32];
    for (int i = 0; i < free.length; i++) {
      free[i] = new ArrayDeque<>();
    }
  }

  /** The pool of this JVM. */
  public static HostBufferPool shared() {
    return SHARED;
  }

  /** Direct, little-endian memory of at least {@code bytes}, positioned at 0 with limit {@code bytes}. */
  public ByteBuffer take(int bytes) {
    if (bytes > 1 << 30) {
      return ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }
    int cls = sizeClass(bytes);
    ByteBuffer b;
    synchronized (this) {
      b = free[cls].pollFirst();
      if (b != null) {
        pooledBytes -= b.capacity();
      }
    }
    if (b == null) {
      b = ByteBuffer.allocateDirect(1 << cls);
    }
    b.clear().limit(bytes);
    return b.order(ByteOrder.LITTLE_ENDIAN);
  }

  /** Like {@link #take}, but only from what the pool holds: null where fresh memory would be needed. */
  public ByteBuffer takeIdle(int bytes) {
    if (bytes > 1 << 30) {
      return null;
    }
    int cls = sizeClass(bytes);
    ByteBuffer b;
    synchronized (this) {
      b = free[cls].pollFirst();
      if (b == null) {
        return null;
      }
      pooledBytes -= b.capacity();
    }
    b.clear().limit(bytes);
    return b.order(ByteOrder.LITTLE_ENDIAN);
  }

  /** Gives memory from {@link #take} back. */
  public void give(ByteBuffer b) {
    if (Integer.bitCount(b.capacity()) != 1) {
      return; // not one of ours
    }
    synchronized (this) {
      if (pooledBytes + b.capacity() > maxPooledBytes) {
        return; // let the GC have it
      }
      pooledBytes += b.capacity();
      free[Integer.numberOfTrailingZeros(b.capacity())].addFirst(b);
    }
  }

  /**
   * A Vert.x buffer over pooled memory from {@link #take} holding {@code length} bytes (written by
   * the caller, or to be appended). Its memory returns on {@link LentBuffers#release} or when it is unreachable.
   */
  public Buffer lease(ByteBuffer memory, int length) {
    return lent.lend(memory.duplicate(), length, () -> give(memory));
  }

  /** An empty buffer with room for {@code bytes}; fill it with the append methods. */
  public Buffer lease(int bytes) {
    return lease(take(bytes), 0);
  }

  /** Bytes of leased buffers not yet returned. */
  public long lentBytes() {
    return lent.bytes();
  }

  private static int sizeClass(int bytes) {
    return Math.max(MIN_CLASS, 32 - Integer.numberOfLeadingZeros(Math.max(1, bytes) - 1));
  }
}
