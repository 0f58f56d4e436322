package com.vertxcuda.device.context;

import com.vertxcuda.device.memory.HostBufferPool;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.internal.VertxInternals;
import com.vertxcuda.DeviceInfo;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;

/**
 * One running incarnation of the context tier, seen from the device tier: a typed channel into the
 * context's one submission queue, in this JVM or in a device-host process.
 */
public interface ContextTier {

  /** What the tier tells its device verticle; any thread, each at most once. */
  interface Listener {
    /** The context is lost: poisoned by a sticky error, or its device host gone. */
    void lost(String reason);

    /** The context is being undeployed by someone other than its device verticle (Vert.x closing). */
    default void stopped() {
    }
  }

  /** What the context reported about its device when it became ready. */
  DeviceInfo info();

  /**
   * Queues {@code request} on the context's submission path, in call order; any thread. Its answer
   * comes from wherever its work completes; a tier that is gone answers CONTEXT_LOST.
   */
  void submit(Request request);

  /**
   * How long, in ms, the context's submission thread has been stuck on one item: its liveness,
   * which work queued behind it cannot starve. Fails if the tier does not answer.
   */
  Future<Long> stalledMillis();

  /** Stops the incarnation (closes the context, or ends its process). */
  Future<Void> stop();

  /** Why the tier ended on its own (its device host exited, was killed, its link closed), or null. */
  default String lost() {
    return null;
  }

  /**
   * An empty buffer with room for {@code bytes} that uploads without a host copy (in process
   * isolation it lies in the shared region); fill it with the append methods.
   */
  default Buffer allocateTransferBuffer(int bytes) {
    return HostBufferPool.shared().lease(bytes);
  }

  /** The most bytes users may hold of lent transfer memory at once (see {@code LocalRoutes.Route#lendingLimit}). */
  default long lendingLimit() {
    return Long.MAX_VALUE;
  }

  /**
   * Whether {@code buffer} is memory this tier moves to the device without a host copy of its own
   * (see {@code LocalRoutes.Route#lends}): direct memory here, where the backend reads it as it is.
   */
  default boolean lends(Buffer buffer) {
    return VertxInternals.byteBuf(buffer).hasMemoryAddress();
  }

  /**
   * Pooled host memory of {@code bytes} (its length) for a download too large to lend at once, which
   * the one pump fills chunk by chunk; it returns to the pool when released ({@code LentBuffers#release}) or
   * once unreachable.
   */
  default Buffer landing(int bytes) {
    return HostBufferPool.shared().lease(HostBufferPool.shared().take(bytes), bytes);
  }

  /** Bytes of transfer buffers and downloads lent to users and not yet returned. */
  default long heldTransferBytes() {
    return HostBufferPool.shared().lentBytes();
  }
}
