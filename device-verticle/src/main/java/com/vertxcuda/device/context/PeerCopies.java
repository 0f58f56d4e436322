package com.vertxcuda.device.context;

import com.vertxcuda.Addresses;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.device.spi.GpuEvent;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Copies between two contexts of this process, straight from one to the other: the contexts of this
 * process by device address, and the meeting point of a copy's two sides. The target's side
 * ({@link CopyIns}) arrives holding its target; the source's side ({@code CopyOutRequest}) arrives
 * holding its source's place; whichever comes second hands the pair to the source's submission
 * thread, which queues the copy after the target's pending uses and tells the target's thread the
 * event its target is written by.
 */
public final class PeerCopies {

  /**
   * What the target's side offers: the memory to write, the uses to wait for, and how to finish; or,
   * {@code refused} not null, why the target's side refused the copy.
   */
  record Target(ContextRuntime runtime, Allocation memory, BufferHandle handle, List<GpuEvent> pendingUses,
                Consumer<GpuEvent> written, Consumer<CudaException> failed, CudaException refused,
                AtomicInteger state) {

    /** {@link #state}: neither side has settled the copy yet. */
    static final int OPEN = 0;
    /** The source claimed the copy and is issuing it: the target keeps its place until told. */
    static final int WRITING = 1;
    /** The target gave its place up (deadline, abort): the source must not write it. */
    static final int ENDED = 2;

    static Target refusal(CudaException why) {
      return new Target(null, null, null, List.of(), e -> e.release(), f -> { }, why,
        new AtomicInteger(ENDED));
    }

    /** The source's claim, just before it issues the copy; false if the target has given its place up. */
    boolean claim() {
      return state.compareAndSet(OPEN, WRITING);
    }
  }

  private static final Map<String, ContextRuntime> CONTEXTS = new ConcurrentHashMap<>();
  private static final Map<Long, Object> WAITING = new HashMap<>();

  private PeerCopies() {
  }

  static void register(ContextRuntime runtime) {
    CONTEXTS.put(Addresses.device(runtime.node(), runtime.deviceIndex()), runtime);
  }

  static void unregister(ContextRuntime runtime) {
    CONTEXTS.remove(Addresses.device(runtime.node(), runtime.deviceIndex()), runtime);
  }

  /**
   * Whether a copy from the device at {@code source} to the one at {@code target} can go straight
   * between their contexts: both in this process, healthy, of one backend, and allowed by both.
   */
  public static boolean direct(String source, String target) {
    ContextRuntime s = CONTEXTS.get(source);
    ContextRuntime t = CONTEXTS.get(target);
    return s != null && t != null && s != t && !s.isPoisoned() && !t.isPoisoned()
      && s.backend().equals(t.backend()) && s.options().isPeerCopy() && t.options().isPeerCopy();
  }

  /** The target's side of copy {@code transfer} has arrived; on its submission thread. */
  static void target(long transfer, Target target) {
    Consumer<Target> source;
    synchronized (WAITING) {
      Object other = WAITING.remove(transfer);
      if (!(other instanceof Consumer)) {
        WAITING.put(transfer, target);
        return;
      }
      source = cast(other);
    }
    source.accept(target);
  }

  /**
   * The source's side of copy {@code transfer} has arrived; on its submission thread. {@code go}
   * runs once the target's side is there (on whichever thread brought the second side: it must hop
   * to the source's thread itself).
   */
  static void source(long transfer, Consumer<Target> go) {
    Target target;
    synchronized (WAITING) {
      Object other = WAITING.remove(transfer);
      if (!(other instanceof Target)) {
        WAITING.put(transfer, go);
        return;
      }
      target = (Target) other;
    }
    go.accept(target);
  }

  /** Forgets a side still waiting (its copy ended); returns the target's side if it was that. */
  static void cancel(long transfer) {
    Object gone;
    synchronized (WAITING) {
      gone = WAITING.remove(transfer);
    }
    if (gone instanceof Target) {
      ((Target) gone).pendingUses().forEach(GpuEvent::release);
    }
  }

  /**
   * Forgets the target's refusal of copy {@code transfer} if no source side has taken it: a start that
   * was refused keeps its refusal for the source only until the start's deadline, so starts whose
   * source never comes (a raw or hostile sender) leave nothing behind.
   */
  static void forgetRefusal(long transfer) {
    synchronized (WAITING) {
      if (WAITING.get(transfer) instanceof Target t && t.refused() != null) {
        WAITING.remove(transfer);
      }
    }
  }

  /** Sides of copies in this process waiting for their other side. */
  static int waiting() {
    synchronized (WAITING) {
      return WAITING.size();
    }
  }

  @SuppressWarnings("unchecked")
  private static Consumer<Target> cast(Object o) {
    return (Consumer<Target>) o;
  }
}
