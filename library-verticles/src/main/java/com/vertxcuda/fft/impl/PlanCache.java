package com.vertxcuda.fft.impl;

import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.GpuEvent;
import io.vertx.core.Context;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The FFT verticle's plans, least recently used evicted first. A plan is destroyed only after the
 * last work queued with it has completed; on close, every plan goes at once.
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
  private final DeviceContext device;
  private final Context context;
  private final LinkedHashMap<FftPlanKey, Entry> plans = new LinkedHashMap<>(16, 0.75f, true);
  private final List<Entry> retiring = new ArrayList<>();

  PlanCache(int capacity, FftEngine engine, DeviceContext device, Context context) {
    this.capacity = Math.max(1, capacity);
    this.engine = engine;
    this.device = device;
    this.context = context;
  }

  /** The cached plan of {@code key}, or null. */
  Entry get(FftPlanKey key) {
    return plans.get(key);
  }

  /** Makes, caches and returns a plan, evicting the least recently used beyond capacity. */
  Entry create(FftPlanKey key) throws BackendException {
    Entry e = new Entry(engine.plan(key));
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
      release(old, false);
      return;
    }
    retiring.add(old);
    device.whenComplete(old.lastUse).whenComplete((v, t) -> context.runOnContext(x -> {
      if (retiring.remove(old)) {
        release(old, t != null);
      }
    }));
  }

  private void release(Entry e, boolean poisoned) {
    if (e.lastUse != null) {
      e.lastUse.release();
      e.lastUse = null;
    }
    engine.destroy(e.plan, poisoned);
  }

  /** Destroys every plan (the verticle is stopping). */
  void close(boolean poisoned) {
    plans.values().forEach(e -> release(e, poisoned));
    plans.clear();
    retiring.forEach(e -> release(e, poisoned));
    retiring.clear();
  }
}
