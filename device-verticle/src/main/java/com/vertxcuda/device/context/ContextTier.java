package com.vertxcuda.device.context;

import com.vertxcuda.device.memory.HostTransferMemory;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.internal.TransferMemory;
import com.vertxcuda.DeviceInfo;
import io.vertx.core.Future;

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

  /**
   * Whether the tier takes no more requests: stopped, or ended on its own. A request that finds it so
   * was never handed to a context; its device may still be taking the end in.
   */
  default boolean ended() {
    return lost() != null;
  }

  /** Why the tier ended on its own (its device host exited, was killed, its link closed), or null. */
  default String lost() {
    return null;
  }

  /**
   * The host memory this tier lends users for transfers, uncharged (the device's admission charges
   * it to the transfer budget): here the JVM's host buffer pool, whose direct memory a backend in
   * this JVM reads as it lies.
   */
  default TransferMemory transferMemory() {
    return HostTransferMemory.POOLED;
  }
}
