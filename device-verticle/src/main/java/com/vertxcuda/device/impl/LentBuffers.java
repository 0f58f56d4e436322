package com.vertxcuda.device.impl;

import com.vertxcuda.impl.VertxInternals;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.vertx.core.buffer.Buffer;

import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Vert.x buffers lent over memory that must go back where it came from (a pool, a shared region):
 * the memory returns exactly once, when the user releases the buffer or when it and every slice of it
 * become unreachable.
 */
public final class LentBuffers {

  private static final Cleaner CLEANER = Cleaner.create();

  /**
   * Every buffer lent in this JVM, by the address of its memory, whichever pool or region lent it: a
   * buffer goes back with or without the context that lent it (a rebuild, a loss, an undeploy).
   */
  private static final Map<Long, Cleaner.Cleanable> LENT = new ConcurrentHashMap<>();
  private final java.util.concurrent.atomic.AtomicLong bytes = new java.util.concurrent.atomic.AtomicLong();

  /**
   * A buffer over {@code memory} (direct; its position to limit) holding {@code length} bytes;
   * {@code onReturn} runs once the buffer is released or unreachable.
   */
  public Buffer lend(ByteBuffer memory, int length, Runnable onReturn) {
    ByteBuf buf = Unpooled.wrappedBuffer(memory.slice().order(ByteOrder.LITTLE_ENDIAN)).writerIndex(length);
    Buffer b = VertxInternals.buffer(buf);
    long address = VertxInternals.directBufferAddress(memory) + memory.position();
    AtomicBoolean done = new AtomicBoolean();
    // Tied to the ByteBuf, not the Buffer wrapper: slices and duplicates (a Buffer.slice the user
    // keeps, a write still in flight) reach it, so the memory cannot be reused under them.
    // The action must not reach the buffer, or it would never become unreachable.
    Map<Long, Cleaner.Cleanable> table = LENT;
    java.util.concurrent.atomic.AtomicLong counted = bytes;
    long capacity = memory.remaining();
    counted.addAndGet(capacity);
    LENT.put(address, CLEANER.register(buf, () -> {
      if (done.compareAndSet(false, true)) {
        table.remove(address);
        counted.addAndGet(-capacity);
        onReturn.run();
      }
    }));
    return b;
  }

  /** Bytes of the buffers lent here and not yet returned. */
  public long bytes() {
    return bytes.get();
  }

  /**
   * Returns a lent buffer's memory now to whichever pool, region or pinned block of this JVM lent it;
   * the buffer must not be used afterwards. False if none lent it (or it went back already).
   */
  public static boolean release(Buffer buffer) {
    return releaseLent(buffer) || com.vertxcuda.device.cuda.PinnedMemory.release(buffer);
  }

  // Lent through this class (a pool's, a region's); pinned memory keeps its own leases.
  private static boolean releaseLent(Buffer buffer) {
    ByteBuf buf = VertxInternals.byteBuf(buffer);
    if (!buf.hasMemoryAddress()) {
      return false;
    }
    Cleaner.Cleanable c = LENT.get(buf.memoryAddress() + buf.readerIndex());
    if (c == null) {
      return false;
    }
    c.clean();
    return true;
  }
}
