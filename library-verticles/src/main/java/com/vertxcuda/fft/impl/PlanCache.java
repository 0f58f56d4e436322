package com.vertxcuda.fft.impl;

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
 * The FFT library's plans, least recently used evicted first. Used on the submission thread, but
 * plans are made off it ({@link #make}, a request's {@link Preparation}): requests of a key whose
 * plan is being made wait for that one plan rather than make their own. A plan is destroyed only
 * after the last work queued with it has completed, on the submission thread; on close, every plan
 * goes at once.
 */
final class PlanCache {

  static final class Entry {
    final FftEngine.Plan plan;
    GpuEvent lastUse;

    Entry(FftEngine.Plan plan) {
      this.plan = plan;
    }

    void used(GpuEvent event) {
      if (lastUse != null) {
        lastUse.release();
      }
      lastUse = event.retain();
    }
  }

  private final int capacity;
  private final FftEngine engine;
  private final LibraryContext runtime;
  private final LinkedHashMap<FftPlanKey, Entry> plans = new LinkedHashMap<>(16, 0.75f, true);
  private final List<Entry> retiring = new ArrayList<>();
  /** Plans being made, or made and not yet cached; removed off the submission thread when making fails. */
  private final Map<FftPlanKey, CompletableFuture<FftEngine.Plan>> making = new ConcurrentHashMap<>();

  PlanCache(int capacity, FftEngine engine, LibraryContext runtime) {
    this.capacity = Math.max(1, capacity);
    this.engine = engine;
    this.runtime = runtime;
  }

  /** The cached plan of {@code key}, or null. */
  Entry get(FftPlanKey key) {
    return plans.get(key);
  }

  /**
   * The preparation that makes {@code key}'s plan, or waits for the one already being made; its
   * result goes to {@link #take}.
   */
  Preparation make(FftPlanKey key) {
    CompletableFuture<FftEngine.Plan> fresh = new CompletableFuture<>();
    CompletableFuture<FftEngine.Plan> made = making.putIfAbsent(key, fresh);
    if (made != null) {
      return () -> {
        made.join();
        return made;
      };
    }
    return () -> {
      try {
        fresh.complete(engine.plan(key));
      } catch (Throwable t) {
        // The next request of this key tries again.
        making.remove(key, fresh);
        fresh.completeExceptionally(t);
      }
      fresh.join();
      return fresh;
    };
  }

  /**
   * The entry of {@code key} once a preparation from {@link #make} gave {@code prepared}: the plan
   * it made, cached now by the first request that takes it. Null when that plan has been cached
   * and evicted since (the request makes another).
   */
  @SuppressWarnings("unchecked")
  Entry take(FftPlanKey key, Object prepared) {
    CompletableFuture<FftEngine.Plan> made = (CompletableFuture<FftEngine.Plan>) prepared;
    if (!making.remove(key, made)) {
      return plans.get(key);
    }
    Entry e = new Entry(made.join());
    plans.put(key, e);
    if (plans.size() > capacity) {
      Iterator<Map.Entry<FftPlanKey, Entry>> eldest = plans.entrySet().iterator();
      Entry old = eldest.next().getValue();
      eldest.remove();
      retire(old);
    }
    return e;
  }

  int size() {
    return plans.size();
  }

  private void retire(Entry old) {
    if (old.lastUse == null || old.lastUse.isComplete()) {
      release(old, runtime.isPoisoned());
      return;
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
  }

  /** Destroys every plan, those made for requests that never took them too (the context is closing). */
  void close(boolean poisoned) {
    plans.values().forEach(e -> release(e, poisoned));
    plans.clear();
    retiring.forEach(e -> release(e, poisoned));
    retiring.clear();
    making.values().forEach(f -> {
      if (f.isDone() && !f.isCompletedExceptionally()) {
        engine.destroy(f.join(), poisoned);
      }
    });
    making.clear();
  }
}
