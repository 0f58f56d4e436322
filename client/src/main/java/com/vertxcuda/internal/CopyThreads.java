package com.vertxcuda.internal;

import java.nio.ByteBuffer;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * The threads that copy bulk data between Java memory and the memory a device lends (pinned
 * buffers, shared-region slots), for every transfer of this JVM: never the caller's thread, an
 * event loop or a link's reader. min(8, cores / 2) daemon threads ({@code vertx-cuda-copy-*}),
 * started on demand and ended when idle. The one place that decides how a copy is cut: in pieces
 * of at most {@link #PIECE} bytes on one thread ({@link #copy}), or spread over these threads
 * ({@link #spread}).
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
   * meanwhile, and so stops every thread — event loops included — until it ends: a GiB staged in one
   * put stalls even an idle event loop's timers for a visible fraction of a second.
   */
  public static void copy(ByteBuffer from, ByteBuffer to) {
    ByteBuffer src = from.duplicate();
    while (src.hasRemaining()) {
      int n = Math.min(PIECE, src.remaining());
      ByteBuffer piece = src.slice(src.position(), n);
      to.put(piece);
      src.position(src.position() + n);
    }
  }

  /**
   * Bytes of a piece, at least, of a copy spread over the copy threads: handing a piece to a thread
   * costs the wake-up of a parked thread, about as long as copying a MiB, so smaller pieces would
   * spend more on waking threads than they save.
   */
  static final int MIN_SPREAD = 1 << 20;

  /** Copies units [{@code from}, {@code from + length}) of a larger copy. */
  @FunctionalInterface
  public interface Piece {
    void copy(int from, int length);
  }

  /**
   * Copies {@code units} units of {@code unitBytes} bytes each, cut into at most {@link #COUNT}
   * pieces of at least {@link #MIN_SPREAD} bytes: the first on this thread, the others on the copy
   * threads (a copy of less than two such pieces runs whole on this thread), each in bulk copies of
   * at most {@link #PIECE} bytes. {@code done} runs once,
   * on the thread that finished the last piece, with the first failure or null, and only when no
   * piece is copying any more. Never blocks, so a copy thread may spread a copy of its own; never
   * throws.
   */
  public static void spread(int units, int unitBytes, Piece piece, Consumer<Throwable> done) {
    spread(units, unitBytes, (int) Math.max(1, Math.min(COUNT, (long) units * unitBytes / MIN_SPREAD)), piece, done);
  }

  /** {@link #spread} in at most {@code pieces} pieces (whole pages of 4 KiB but the last). */
  static void spread(int units, int unitBytes, int pieces, Piece piece, Consumer<Throwable> done) {
    if (pieces <= 1 || units <= 0) {
      done.accept(run(piece, unitBytes, 0, Math.max(0, units)));
      return;
    }
    int page = Math.max(1, 4096 / unitBytes);
    int per = (int) (((long) units + pieces - 1) / pieces + page - 1) / page * page;
    int count = (int) (((long) units + per - 1) / per);
    AtomicInteger left = new AtomicInteger(count);
    AtomicReference<Throwable> first = new AtomicReference<>();
    Consumer<Throwable> finished = failure -> {
      if (failure != null) {
        first.compareAndSet(null, failure);
      }
      if (left.decrementAndGet() == 0) {
        done.accept(first.get());
      }
    };
    for (int i = 1; i < count; i++) {
      int from = i * per;
      int length = Math.min(per, units - from);
      POOL.execute(() -> finished.accept(run(piece, unitBytes, from, length)));
    }
    finished.accept(run(piece, unitBytes, 0, Math.min(per, units)));
  }

  // A piece's failure, or null, copied in bulk copies of at most PIECE bytes (see copy). Errors too:
  // an array too large for the heap fails its transfer (OUT_OF_MEMORY) instead of ending the thread
  // with the transfer left unanswered.
  private static Throwable run(Piece piece, int unitBytes, int from, int length) {
    int most = Math.max(1, PIECE / unitBytes);
    try {
      for (int at = from, end = from + length; at < end; at += most) {
        piece.copy(at, Math.min(most, end - at));
      }
      return null;
    } catch (RuntimeException | Error e) {
      return e;
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
