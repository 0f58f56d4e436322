package com.vertxcuda.impl;

import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads that copy bulk data between Java memory and the memory a device lends (pinned
 * buffers, shared-region slots), for every transfer of this JVM: never the caller's thread, an
 * event loop or a link's reader. min(8, cores / 2) daemon threads ({@code vertx-cuda-copy-*}),
 * started on demand and ended when idle.
 */
public final class CopyThreads {

  /** How many there are. */
  public static final int COUNT = Math.max(1, Math.min(8, Runtime.getRuntime().availableProcessors() / 2));

  private static final Executor POOL = pool();

  private CopyThreads() {
  }

  /** Bytes of one bulk copy at most: between two, the JVM can reach a safepoint. */
  public static final int PIECE = 4 << 20;

  /**
   * Copies what remains of {@code from} into {@code to} at its position, in pieces of at most
   * {@link #PIECE} bytes. One bulk copy of hundreds of MiB holds up every safepoint the JVM asks for
   * meanwhile, and so stops every thread — event loops included — until it ends (seen on the H200: a
   * 1 GiB heap upload staged in one put stopped a timer on an idle event loop for 300 ms).
   */
  public static void copy(java.nio.ByteBuffer from, java.nio.ByteBuffer to) {
    java.nio.ByteBuffer src = from.duplicate();
    while (src.hasRemaining()) {
      int n = Math.min(PIECE, src.remaining());
      java.nio.ByteBuffer piece = src.slice(src.position(), n);
      to.put(piece);
      src.position(src.position() + n);
    }
  }

  /** Runs {@code copy} on a copy thread. */
  public static void execute(Runnable copy) {
    POOL.execute(copy);
  }

  private static Executor pool() {
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor pool = new ThreadPoolExecutor(COUNT, COUNT, 30, TimeUnit.SECONDS,
      new LinkedBlockingQueue<>(), r -> {
        Thread t = new Thread(r, "vertx-cuda-copy-" + n.incrementAndGet());
        t.setDaemon(true);
        return t;
      });
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }
}
