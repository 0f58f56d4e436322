package com.vertxcuda.device.memory;

import com.vertxcuda.internal.TransferMemory;
import com.vertxcuda.internal.VertxInternals;
import io.vertx.core.buffer.Buffer;

/**
 * The JVM's host buffer pool ({@link HostBufferPool#shared}) as a device's transfer memory: transfer
 * buffers and landings leased from the pool, any direct memory counted as memory the device moves as
 * it is (a backend in this JVM reads it where it lies), no limit of its own, and what is lent
 * returned through {@link LentBuffers#release}. A tier that lends other memory (pinned, a shared
 * region) extends this and overrides what differs; landings always come from the pool.
 */
public class HostTransferMemory implements TransferMemory {

  /** The pool as it is. */
  public static final HostTransferMemory POOLED = new HostTransferMemory();

  protected HostTransferMemory() {
  }

  @Override
  public Buffer allocate(int bytes) {
    return HostBufferPool.shared().lease(bytes);
  }

  @Override
  public Buffer landing(int bytes) {
    HostBufferPool pool = HostBufferPool.shared();
    return pool.lease(pool.take(bytes), bytes);
  }

  /** Back to whichever pool, region or pinned block of this JVM lent it. */
  @Override
  public boolean release(Buffer buffer) {
    return LentBuffers.release(buffer);
  }

  @Override
  public boolean lends(Buffer buffer) {
    return VertxInternals.byteBuf(buffer).hasMemoryAddress();
  }

  @Override
  public long limit() {
    return Long.MAX_VALUE;
  }

  /** What the pool has lent, for every device of this JVM. */
  @Override
  public long held() {
    return HostBufferPool.shared().lentBytes();
  }
}
