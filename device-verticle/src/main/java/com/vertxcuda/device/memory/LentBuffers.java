package com.vertxcuda.device.memory;

import com.vertxcuda.internal.VertxInternals;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.vertx.core.buffer.Buffer;

import java.lang.ref.Cleaner;
import java.lang.ref.WeakReference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

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
  private static final Map<Long, Lease> LENT = new ConcurrentHashMap<>();
  private final AtomicLong bytes = new AtomicLong();

  /**
   * Memory of this JVM that keeps its own leases rather than lending through this class (the cuda
   * backend's pinned blocks): asked, in turn, about a buffer this class did not lend. It registers
   * itself before it lends anything ({@link #alsoLentBy}), so this package needs no backend.
   */
  public interface Lender {
    /** Returns the memory under {@code buffer} now; false if this lender did not lend it. */
    boolean release(Buffer buffer);

    /** Runs {@code action} once the memory under {@code buffer} has returned (now if it has); false, running nothing, if this lender did not lend it. */
    boolean whenReturned(Buffer buffer, Runnable action);

    /** {@link LentBuffers#hold} for a buffer this lender lent; null if it did not lend it, or it was released. */
    Hold hold(Buffer buffer);
  }

  /**
   * A hold on lent memory ({@link #hold}): while one is open, releasing the buffer succeeds but its
   * memory goes back only once the last hold closes. Closing twice closes once.
   */
  public interface Hold extends AutoCloseable {
    @Override
    void close();
  }

  /**
   * Counts the holds on one piece of lent memory and whether its user released it meanwhile: the
   * one rule for deferring a return, for this class's leases and the pinned blocks alike.
   */
  public static final class Holds {
    private int open;
    private boolean releaseAsked;

    /** Opens a hold; false (none opened) once a release was asked. */
    public synchronized boolean open() {
      if (releaseAsked) {
        return false;
      }
      open++;
      return true;
    }

    /** A release is asked: true if it may go now, false if it waits for the last hold ({@link #close}). */
    public synchronized boolean release() {
      releaseAsked = true;
      return open == 0;
    }

    /** Closes a hold: true if it was the last one and a release waits, which goes now. */
    private synchronized boolean close() {
      open--;
      return open == 0 && releaseAsked;
    }

    /**
     * A {@link Hold} opened with {@link #open}, which keeps {@code memory} (the lent buffer) reachable,
     * so the collector does not return the memory under it, and runs {@code release} when it is the
     * last to close after a release was asked.
     */
    public Hold hold(Object memory, Runnable release) {
      AtomicBoolean closed = new AtomicBoolean();
      return new Hold() {
        @SuppressWarnings("unused")
        private final Object kept = memory;

        @Override
        public void close() {
          if (closed.compareAndSet(false, true) && Holds.this.close()) {
            release.run();
          }
        }
      };
    }
  }

  private static final List<Lender> OTHER_LENDERS = new CopyOnWriteArrayList<>();

  /** Adds {@code lender} to those {@link #release} and {@link #whenReturned} ask about buffers not lent here. */
  public static void alsoLentBy(Lender lender) {
    OTHER_LENDERS.add(lender);
  }

  /**
   * One lent buffer's memory: how to return it now, what else runs once it has returned, the holds
   * on it, and the buffer it was lent as (weakly: a buffer returned and another lent over the same
   * address is not the first one).
   */
  private record Lease(Cleaner.Cleanable cleanable, Returns returns, Holds holds, WeakReference<ByteBuf> lentAs) {
  }

  /**
   * What runs, once, when lent memory returns: the pool's or region's own action, then any added
   * since ({@link #whenReturned}). Reached from the cleaner's action, so it must not reach the buffer.
   */
  private static final class Returns {
    private final Runnable first;
    private List<Runnable> more;
    private boolean ran;

    Returns(Runnable first) {
      this.first = first;
    }

    // False once the memory has returned: the caller runs its action itself.
    synchronized boolean add(Runnable action) {
      if (ran) {
        return false;
      }
      if (more == null) {
        more = new ArrayList<>(1);
      }
      more.add(action);
      return true;
    }

    void run() {
      List<Runnable> then;
      synchronized (this) {
        ran = true;
        then = more;
        more = null;
      }
      first.run();
      if (then != null) {
        then.forEach(Runnable::run);
      }
    }
  }

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
    Map<Long, Lease> table = LENT;
    AtomicLong counted = bytes;
    long capacity = memory.remaining();
    counted.addAndGet(capacity);
    Returns returns = new Returns(onReturn);
    LENT.put(address, new Lease(CLEANER.register(buf, () -> {
      if (done.compareAndSet(false, true)) {
        table.remove(address);
        counted.addAndGet(-capacity);
        returns.run();
      }
    }), returns, new Holds(), new WeakReference<>(VertxInternals.backing(b))));
    return b;
  }

  /**
   * Runs {@code action} once the memory under {@code buffer} (a buffer lent in this JVM: a pool's, a
   * region's, a pinned block) has returned, or now if it has already; false, running nothing, if no
   * pool, region or pinned block of this JVM lent it. Any thread.
   */
  public static boolean whenReturned(Buffer buffer, Runnable action) {
    Lease lease = leaseOf(buffer);
    if (lease == null) {
      for (Lender other : OTHER_LENDERS) {
        if (other.whenReturned(buffer, action)) {
          return true;
        }
      }
      return false;
    }
    if (!lease.returns().add(action)) {
      action.run();
    }
    return true;
  }

  /**
   * Holds the memory under {@code buffer}, a buffer as a pool, region or pinned block of this JVM
   * lent it (not a slice of one), so that it stays valid while something outside the buffer uses it
   * (a recorded pipeline's copies): a release meanwhile is deferred until the hold closes. Null if
   * none lent it, or it was released or returned already. Any thread.
   */
  public static Hold hold(Buffer buffer) {
    Lease lease = leaseOf(buffer);
    if (lease == null) {
      for (Lender other : OTHER_LENDERS) {
        Hold h = other.hold(buffer);
        if (h != null) {
          return h;
        }
      }
      return null;
    }
    ByteBuf lentAs = lease.lentAs().get();
    if (lentAs == null || lentAs != VertxInternals.backing(buffer) || !lease.holds().open()) {
      return null;
    }
    return lease.holds().hold(lentAs, () -> lease.cleanable().clean());
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
    if (releaseLent(buffer)) {
      return true;
    }
    for (Lender other : OTHER_LENDERS) {
      if (other.release(buffer)) {
        return true;
      }
    }
    return false;
  }

  // Lent through this class (a pool's, a region's); other lenders (pinned memory) keep their own leases.
  private static boolean releaseLent(Buffer buffer) {
    Lease lease = leaseOf(buffer);
    if (lease == null) {
      return false;
    }
    // Held (by a pipeline): the memory goes back when the last hold closes.
    if (lease.holds().release()) {
      lease.cleanable().clean();
    }
    return true;
  }

  private static Lease leaseOf(Buffer buffer) {
    ByteBuf buf = VertxInternals.byteBuf(buffer);
    if (!buf.hasMemoryAddress()) {
      return null;
    }
    return LENT.get(buf.memoryAddress() + buf.readerIndex());
  }
}
