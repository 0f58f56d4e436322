package com.vertxcuda.device.context;

import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.DeviceBuffer;
import com.vertxcuda.device.spi.LibraryContext;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * The one place that orders work on buffers across streams, called only from the context's
 * submission thread (so it needs no locks: the order of calls is the order that holds). Each buffer remembers the event of its
 * last write and the events of reads since; before work runs on a stream, that stream waits on the
 * last write of everything it touches and, for what it writes, on the reads since (read-after-write,
 * write-after-read, write-after-write). Then the work is queued and an event is recorded after it.
 */
public final class StreamOrdering {

  private static final int PRUNE_AT = 8;
  private final DeviceContext device;
  /** Whether every run is timed (the device measures phases): timed markers around the work. */
  private final boolean timedAlways;
  /** Whether runs are timed now: always, or while a request that measures its phases is served. */
  private boolean timed;
  /** The last run's timing, until whoever awaits its event takes it ({@link #timing}); null when none. */
  private WorkTiming last;

  public StreamOrdering(DeviceContext device) {
    this(device, false);
  }

  /** With {@code timed}, each run records timed markers around its work ({@link WorkTiming}). */
  public StreamOrdering(DeviceContext device, boolean timed) {
    this.device = device;
    this.timedAlways = timed;
    this.timed = timed;
  }

  /**
   * Times runs from now on while {@code on} (a request that measures its phases is being served,
   * or its work is held to run later), else as the device does. On the submission thread.
   */
  void timeRuns(boolean on) {
    if (!on && !timedAlways && last != null) {
      last.abandon(); // a timed run whose event nobody awaited; no later run replaces it
      last = null;
    }
    timed = timedAlways || on;
  }

  /**
   * The timing of the run that returned {@code done}, taken once (by whoever awaits it); null when
   * runs are not timed or that was not the last run. On the submission thread.
   */
  WorkTiming timing(GpuEvent done) {
    WorkTiming t = last;
    if (t == null || t.done() != done) {
      return null;
    }
    last = null;
    return t;
  }

  /**
   * Orders {@code work} on {@code stream} after earlier uses of {@code reads} and {@code writes},
   * queues it, records an event after it and makes that the buffers' latest use. The returned
   * event is the caller's (release it when done). On the submission thread only: the order of
   * these calls is the order that holds.
   */
  public GpuEvent run(GpuStream stream, List<? extends DeviceBuffer> reads, List<? extends DeviceBuffer> writes,
                      LibraryContext.Work work) throws BackendException {
    Allocation[] all = distinct(reads, writes);
    int n = count;
    for (int i = 0; i < n; i++) {
      Allocation a = all[i];
      if (a.lastWrite != null && a.lastWrite.stream() != stream && !a.lastWrite.isComplete()) {
        device.await(stream, a.lastWrite);
      }
      if (a.written) {
        for (GpuEvent r : a.readsSinceWrite) {
          if (r.stream() != stream && !r.isComplete()) {
            device.await(stream, r);
          }
        }
      }
    }
    GpuEvent done;
    if (timed) {
      done = timedRun(stream, work);
    } else {
      work.enqueue();
      done = device.record(stream);
    }
    for (int i = 0; i < n; i++) {
      Allocation a = all[i];
      if (a.written) {
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
    return done;
  }

  // The work between two timed markers; the last run's timing waits for whoever awaits its event.
  private GpuEvent timedRun(GpuStream stream, LibraryContext.Work work) throws BackendException {
    if (last != null) {
      last.abandon(); // a run nobody awaited (its event went into a pipeline's or a free's wait)
      last = null;
    }
    long enqueued = System.nanoTime();
    GpuEvent start = device.recordTimed(stream);
    GpuEvent done;
    try {
      work.enqueue();
      done = device.recordTimed(stream);
    } catch (BackendException | RuntimeException | Error e) {
      start.release();
      throw e;
    }
    last = new WorkTiming(enqueued, start, done);
    return done;
  }

  /** The events of every recorded use of {@code a} not yet known complete (retained for the caller). */
  public List<GpuEvent> pendingUses(Allocation a) {
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

  /** Drops the ordering state of a buffer that is gone. */
  public void forget(Allocation a) {
    if (a.lastWrite != null) {
      a.lastWrite.release();
      a.lastWrite = null;
    }
    a.readsSinceWrite.forEach(GpuEvent::release);
    a.readsSinceWrite.clear();
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

  /** The number of buffers {@link #distinct} put in its array. */
  private int count;
  /** Marks the buffers of one call: an allocation whose {@code seen} equals it is in the call. */
  private int stamp;

  // Each buffer once, with whether the call writes it. Batched calls bring hundreds of buffers
  // (the same inputs many times): a stamp per call, not sets (single-threaded, so the fields on
  // the allocations are safe).
  private Allocation[] distinct(List<? extends DeviceBuffer> reads, List<? extends DeviceBuffer> writes) {
    int s = ++stamp;
    Allocation[] all = new Allocation[reads.size() + writes.size()];
    int n = 0;
    for (DeviceBuffer b : writes) {
      Allocation a = (Allocation) b;
      if (a.seen != s) {
        a.seen = s;
        all[n++] = a;
      }
      a.written = true;
    }
    for (DeviceBuffer b : reads) {
      Allocation a = (Allocation) b;
      if (a.seen != s) {
        a.seen = s;
        a.written = false;
        all[n++] = a;
      }
    }
    count = n;
    return all;
  }
}
