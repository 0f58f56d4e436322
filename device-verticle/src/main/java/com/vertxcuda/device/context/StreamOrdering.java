package com.vertxcuda.device.context;

import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * The one place that orders work on buffers across streams. Each buffer remembers the event of its
 * last write and the events of reads since; before work runs on a stream, that stream waits on the
 * last write of everything it touches and, for what it writes, on the reads since (read-after-write,
 * write-after-read, write-after-write). Then the work is queued and an event is recorded after it.
 */
public final class StreamOrdering {

  /** Enqueues work on a stream. */
  @FunctionalInterface
  public interface Work {
    void enqueue() throws BackendException;
  }

  private static final int PRUNE_AT = 8;
  private final DeviceContext device;

  public StreamOrdering(DeviceContext device) {
    this.device = device;
  }

  /**
   * Orders {@code work} on {@code stream} after earlier uses of {@code reads} and {@code writes},
   * queues it, records an event after it and makes that the buffers' latest use. The returned
   * event is the caller's (release it when done).
   */
  public GpuEvent run(GpuStream stream, List<Allocation> reads, List<Allocation> writes, Work work)
    throws BackendException {
    Allocation[] all = distinctSorted(reads, writes);
    Set<Allocation> written = identitySet(writes);
    lockAndRun(all, 0, () -> {
      for (Allocation a : all) {
        if (a.lastWrite != null && a.lastWrite.stream() != stream && !a.lastWrite.isComplete()) {
          device.await(stream, a.lastWrite);
        }
        if (written.contains(a)) {
          for (GpuEvent r : a.readsSinceWrite) {
            if (r.stream() != stream && !r.isComplete()) {
              device.await(stream, r);
            }
          }
        }
      }
      work.enqueue();
      return null;
    });
    GpuEvent done = device.record(stream);
    lockAndRun(all, 0, () -> {
      for (Allocation a : all) {
        if (written.contains(a)) {
          if (a.lastWrite != null) {
            a.lastWrite.release();
          }
          a.lastWrite = done.retain();
          a.readsSinceWrite.forEach(GpuEvent::release);
          a.readsSinceWrite.clear();
        } else {
          prune(a.readsSinceWrite);
          a.readsSinceWrite.add(done.retain());
        }
      }
      return null;
    });
    return done;
  }

  /** The events of every recorded use of {@code a} not yet known complete (retained for the caller). */
  public List<GpuEvent> pendingUses(Allocation a) {
    synchronized (a) {
      List<GpuEvent> events = new ArrayList<>();
      if (a.lastWrite != null && !a.lastWrite.isComplete()) {
        events.add(a.lastWrite.retain());
      }
      for (GpuEvent r : a.readsSinceWrite) {
        if (!r.isComplete()) {
          events.add(r.retain());
        }
      }
      return events;
    }
  }

  /** Drops the ordering state of a buffer that is gone. */
  public void forget(Allocation a) {
    synchronized (a) {
      if (a.lastWrite != null) {
        a.lastWrite.release();
        a.lastWrite = null;
      }
      a.readsSinceWrite.forEach(GpuEvent::release);
      a.readsSinceWrite.clear();
    }
  }

  private static void prune(List<GpuEvent> events) {
    if (events.size() < PRUNE_AT) {
      return;
    }
    for (Iterator<GpuEvent> it = events.iterator(); it.hasNext(); ) {
      GpuEvent e = it.next();
      if (e.isComplete()) {
        e.release();
        it.remove();
      }
    }
  }

  private interface Locked {
    Void run() throws BackendException;
  }

  // Buffers are locked in id order so two streams touching the same pair cannot deadlock.
  private static void lockAndRun(Allocation[] all, int i, Locked body) throws BackendException {
    if (i == all.length) {
      body.run();
      return;
    }
    synchronized (all[i]) {
      lockAndRun(all, i + 1, body);
    }
  }

  private static Set<Allocation> identitySet(List<Allocation> list) {
    Set<Allocation> set = Collections.newSetFromMap(new IdentityHashMap<>(list.size() * 2));
    set.addAll(list);
    return set;
  }

  // Batched calls bring hundreds of buffers: sets, not list scans.
  private static Allocation[] distinctSorted(List<Allocation> reads, List<Allocation> writes) {
    Set<Allocation> all = identitySet(reads);
    all.addAll(writes);
    Allocation[] sorted = all.toArray(new Allocation[0]);
    Arrays.sort(sorted, Comparator.comparingLong(a -> a.handle().id()));
    return sorted;
  }
}
