package com.vertxcuda.library.fft;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.device.spi.Preparation;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The FFT library's plans, bounded in count and in bytes, least recently used evicted first. Used
 * on the submission thread, but plans are made off it ({@link #make}, a request's
 * {@link Preparation}): requests of a key whose plan is being made wait for that one plan rather
 * than make their own. Every plan taken counts its {@link FftEngine.Plan#bytes()} against the
 * device's memory limit ({@link LibraryContext#reserveLibraryBytes}) until it is destroyed; when
 * that limit is reached, idle cached plans are released to make room. A plan is counted before it
 * is built: its engine's estimate is reserved against the memory limit when its preparation is
 * handed out, and against the plan budget ({@link PlanBuilds}) before the build starts, so plans
 * made at once cannot together pass either; both become the plan's measured bytes once it is taken.
 * A plan outside the cache stays counted in the plan budget until it is destroyed: one larger than
 * the whole budget, which serves its request uncached, and an evicted one whose work is still
 * queued. Builds therefore cannot run ahead of the work that uses their plans: the cache and the
 * plans outside it hold at most twice the budget, or the budget and one plan alone. A plan whose
 * estimate is over the most one plan may hold fails OUT_OF_MEMORY before anything is built. A plan
 * is destroyed only after the last work queued with it has completed, on the submission thread. A
 * plan made for requests that all timed out is destroyed when the last of them is dropped. On
 * close, every plan goes at once.
 */
final class PlanCache {

  static final class Entry {
    final FftEngine.Plan plan;
    final long bytes;
    /** Not cached: released once its one use has completed. */
    final boolean once;
    GpuEvent lastUse;
    /** Whether {@link #bytes} are counted in the plan budget: the entry is outside the cache. */
    boolean outside;

    Entry(FftEngine.Plan plan, long bytes, boolean once) {
      this.plan = plan;
      this.bytes = bytes;
      this.once = once;
    }
  }

  /** A plan being made, and how many requests' preparations still hold a ticket for it. */
  private static final class Making {
    final CompletableFuture<FftEngine.Plan> plan = new CompletableFuture<>();
    /** The estimate reserved against the memory limit until the plan is taken or destroyed. */
    final long estimate;
    /** Bytes held in {@link #builds} (the estimate, then the measured bytes) until then. */
    volatile long building;
    int tickets;

    Making(long estimate) {
      this.estimate = estimate;
    }
  }

  /**
   * What a preparation from {@link #make} hands back: {@link #take} takes it; dropped by the
   * submission loop (its request timed out, the context closed), it is closed, and the last ticket
   * closed of a plan nobody took destroys the plan.
   */
  final class Ticket implements AutoCloseable {
    private final FftPlanKey key;
    private final Making making;
    private boolean done;

    private Ticket(FftPlanKey key, Making making) {
      this.key = key;
      this.making = making;
    }

    @Override
    public void close() {
      if (done) {
        return;
      }
      done = true;
      if (--making.tickets == 0 && making.plan.isDone() && !making.plan.isCompletedExceptionally()
        && PlanCache.this.making.remove(key, making)) {
        engine.destroy(making.plan.join(), runtime.isPoisoned());
        unreserve(making);
      }
    }
  }

  private final int capacity;
  private final long budget;
  private final long largest;
  private final FftEngine engine;
  private final LibraryContext runtime;
  private final LinkedHashMap<FftPlanKey, Entry> plans = new LinkedHashMap<>(16, 0.75f, true);
  private final List<Entry> retiring = new ArrayList<>();
  /** Plans being made, or made and not yet cached; removed off the submission thread when making fails. */
  private final Map<FftPlanKey, Making> making = new ConcurrentHashMap<>();
  private final PlanBuilds builds;
  private long cachedBytes;

  /**
   * {@code budget} bounds the cached plans and, apart, the plans outside the cache; {@code largest}
   * bounds one plan's estimate (Long.MAX_VALUE: only the memory limit does).
   */
  PlanCache(int capacity, long budget, long largest, FftEngine engine, LibraryContext runtime) {
    this.capacity = Math.max(1, capacity);
    this.budget = Math.max(0, budget);
    this.largest = largest;
    this.engine = engine;
    this.runtime = runtime;
    this.builds = new PlanBuilds(this.budget);
  }

  /** The cached plan of {@code key}, or null. */
  Entry get(FftPlanKey key) {
    return plans.get(key);
  }

  /**
   * The preparation that makes {@code key}'s plan, or waits for the one already being made; its
   * result (a {@link Ticket}) goes to {@link #take}.
   */
  Preparation make(FftPlanKey key) {
    Making made = making.get(key);
    if (made != null) {
      made.tickets++;
      Ticket ticket = new Ticket(key, made);
      return () -> {
        made.plan.join();
        return ticket;
      };
    }
    long estimate = admit(key);
    reserve(estimate, null);
    Making fresh = new Making(estimate);
    making.put(key, fresh);
    fresh.tickets++;
    Ticket ticket = new Ticket(key, fresh);
    return () -> {
      try {
        builds.reserve(estimate);
        fresh.building = estimate;
        FftEngine.Plan plan = engine.plan(key);
        builds.adjust(estimate, plan.bytes());
        fresh.building = plan.bytes();
        fresh.plan.complete(plan);
      } catch (Throwable t) {
        // Nothing was made: the next request of this key tries again.
        making.remove(key, fresh);
        unreserve(fresh);
        fresh.plan.completeExceptionally(t);
      }
      fresh.plan.join();
      return ticket;
    };
  }

  /**
   * The estimated bytes of {@code key}'s plan; OUT_OF_MEMORY when that is over the most one plan may
   * hold. On the submission thread, before anything is built, for cached plans and a recorded
   * pipeline's own alike.
   */
  long admit(FftPlanKey key) {
    long estimate = engine.estimatedBytes(key);
    if (estimate > largest) {
      throw new CudaException(FailureCode.OUT_OF_MEMORY, "the FFT plan of " + key.type() + " n=" + key.n()
        + " batch " + key.batch() + " needs " + estimate + " bytes, over the " + largest
        + " bytes one FFT plan may hold on this device");
    }
    return estimate;
  }

  // Gives back what a plan being made held against the memory limit and the plan budget. Any thread.
  private void unreserve(Making m) {
    builds.release(m.building);
    m.building = 0;
    runtime.releaseLibraryBytes(Library.FFT, m.estimate);
  }

  /**
   * The entry of {@code key} once a preparation from {@link #make} gave {@code prepared}: the plan
   * it made, reserved against the memory limit and cached now by the first request that takes it
   * (or, larger than the budget, for this request only). Null when that plan has been cached and
   * evicted since, or was used uncached (the request makes another). OUT_OF_MEMORY when the plan
   * does not fit the memory limit even with every idle cached plan released.
   */
  Entry take(FftPlanKey key, Object prepared) {
    Ticket ticket = (Ticket) prepared;
    ticket.done = true;
    ticket.making.tickets--;
    if (!making.remove(key, ticket.making)) {
      return plans.get(key);
    }
    Making m = ticket.making;
    FftEngine.Plan plan = m.plan.join();
    long bytes = plan.bytes();
    // The estimate becomes the measured bytes against the memory limit.
    runtime.releaseLibraryBytes(Library.FFT, m.estimate);
    try {
      reserve(bytes, plan);
    } catch (CudaException full) {
      builds.release(m.building);
      m.building = 0;
      throw full;
    }
    if (bytes > budget) {
      // Still counted in the plan budget (as measured) until it is destroyed.
      Entry once = new Entry(plan, bytes, true);
      once.outside = true;
      m.building = 0;
      return once;
    }
    builds.release(m.building);
    m.building = 0;
    Entry e = new Entry(plan, bytes, false);
    plans.put(key, e);
    cachedBytes += bytes;
    Iterator<Map.Entry<FftPlanKey, Entry>> eldest = plans.entrySet().iterator();
    while (plans.size() > capacity || cachedBytes > budget) {
      Entry old = eldest.next().getValue();
      if (old == e) {
        break;
      }
      eldest.remove();
      cachedBytes -= old.bytes;
      retire(old);
    }
    return e;
  }

  /** Records {@code event} as the entry's last use; an uncached entry is released once it is reached. */
  void used(Entry e, GpuEvent event) {
    if (e.lastUse != null) {
      e.lastUse.release();
    }
    e.lastUse = event.retain();
    if (e.once) {
      retire(e);
    }
  }

  /** Releases a plan taken for a request that failed before it was used. */
  void unused(Entry e) {
    if (e.once && e.lastUse == null) {
      release(e, runtime.isPoisoned());
    }
  }

  int size() {
    return plans.size();
  }

  /** Bytes of the cached plans (the ones the budget bounds). */
  long cachedBytes() {
    return cachedBytes;
  }

  // Counts bytes of a plan (made, or still to be made when null) against the memory limit,
  // releasing idle cached plans (least recently used first) while they do not fit; destroys the plan
  // and fails OUT_OF_MEMORY when nothing more can go.
  private void reserve(long bytes, FftEngine.Plan plan) {
    while (true) {
      try {
        runtime.reserveLibraryBytes(Library.FFT, bytes);
        return;
      } catch (CudaException full) {
        if (full.code() != FailureCode.OUT_OF_MEMORY || !evictIdle()) {
          if (plan != null) {
            engine.destroy(plan, runtime.isPoisoned());
          }
          throw full;
        }
      }
    }
  }

  // Releases one plan whose work has completed: an evicted or uncached one still waiting for its
  // release to run, else the least recently used idle cached one. False when there is none.
  private boolean evictIdle() {
    for (Iterator<Entry> it = retiring.iterator(); it.hasNext(); ) {
      Entry old = it.next();
      if (old.lastUse.isComplete()) {
        it.remove();
        release(old, runtime.isPoisoned());
        return true;
      }
    }
    for (Iterator<Entry> it = plans.values().iterator(); it.hasNext(); ) {
      Entry old = it.next();
      if (old.lastUse == null || old.lastUse.isComplete()) {
        it.remove();
        cachedBytes -= old.bytes;
        release(old, runtime.isPoisoned());
        return true;
      }
    }
    return false;
  }

  private void retire(Entry old) {
    if (old.lastUse == null || old.lastUse.isComplete()) {
      release(old, runtime.isPoisoned());
      return;
    }
    if (!old.outside) {
      // Evicted while its work is queued: it lives on outside the cache, counted in the plan budget.
      old.outside = true;
      builds.hold(old.bytes);
    }
    retiring.add(old);
    runtime.afterUses(List.of(old.lastUse.retain()), () -> {
      if (retiring.remove(old)) {
        release(old, runtime.isPoisoned());
      }
    });
  }

  private void release(Entry e, boolean poisoned) {
    if (e.lastUse != null) {
      e.lastUse.release();
      e.lastUse = null;
    }
    engine.destroy(e.plan, poisoned);
    runtime.releaseLibraryBytes(Library.FFT, e.bytes);
    if (e.outside) {
      e.outside = false;
      builds.release(e.bytes);
    }
  }

  /** Destroys every plan, those made for requests that never took them too (the context is closing). */
  void close(boolean poisoned) {
    plans.values().forEach(e -> release(e, poisoned));
    plans.clear();
    cachedBytes = 0;
    retiring.forEach(e -> release(e, poisoned));
    retiring.clear();
    // A plan still being made is destroyed when it is done (on the preparation thread that made it).
    making.values().forEach(m -> m.plan.thenAccept(plan -> {
      engine.destroy(plan, poisoned);
      unreserve(m);
    }));
    making.clear();
  }
}
