package com.vertxcuda;


import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * What a {@link PlacementPolicy} knows beyond the registry: what this JVM has placed on each device since the device last published its entry: a pick counts
 * until the device publishes an entry newer than the pick, or for {@link #REMEMBER_MILLIS} at most.
 * Thread-safe; one per JVM.
 */
public final class Placements {

  /**
   * How long a pick counts, in ms, whatever the device publishes meanwhile: a pick becomes load only
   * when its client sends, so an entry published after the pick need not include it (forgetting
   * picks at each publication would send a burst's choosers to whichever device had just published).
   */
  static final long REMEMBER_MILLIS = 2_000;

  private static final Placements JVM = new Placements();

  private record Pick(long at, long bytes) {
  }

  private final Map<String, ArrayDeque<Pick>> picks = new ConcurrentHashMap<>();
  private final AtomicLong turn = new AtomicLong();

  private Placements() {
  }

  /** This JVM's record. */
  static Placements jvm() {
    return JVM;
  }

  /** Picks of {@code d} made here in the last {@link #REMEMBER_MILLIS} ms. */
  public long pending(DeviceInfo d) {
    return sum(d, false);
  }

  /** Bytes that picks of {@code d} made here are expected to take beyond its published free memory. */
  public long pendingBytes(DeviceInfo d) {
    return sum(d, true);
  }

  /** The next turn of this JVM's round robin. */
  public long nextTurn() {
    return turn.getAndIncrement();
  }

  private long sum(DeviceInfo d, boolean bytes) {
    ArrayDeque<Pick> q = picks.get(d.getAddress());
    if (q == null) {
      return 0;
    }
    // Bytes: an entry published after a pick shows the memory its client allocated by then, and an
    // allocation stays; counts stay for the whole window (load is only what is in flight now).
    long since = System.currentTimeMillis() - REMEMBER_MILLIS;
    if (bytes) {
      since = Math.max(since, d.getUpdated());
    }
    long n = 0;
    synchronized (q) {
      for (Iterator<Pick> it = q.iterator(); it.hasNext(); ) {
        Pick p = it.next();
        if (p.at < since) {
          it.remove();
        } else {
          n += bytes ? p.bytes : 1;
        }
      }
    }
    return n;
  }

  /**
   * Lets {@code policy} choose among {@code ready} and records the pick; CONTEXT_LOST when there is
   * no candidate or the policy finds none. Synchronized so that concurrent choosers of this JVM see
   * each other's picks.
   */
  synchronized DeviceInfo choose(PlacementPolicy policy, List<DeviceInfo> ready) {
    if (ready.isEmpty()) {
      throw new CudaException(FailureCode.CONTEXT_LOST, "no ready device is registered");
    }
    DeviceInfo d = policy.choose(ready, this);
    if (d == null) {
      throw new CudaException(FailureCode.CONTEXT_LOST, "none of the " + ready.size() + " ready devices suits " + policy);
    }
    ArrayDeque<Pick> q = picks.computeIfAbsent(d.getAddress(), a -> new ArrayDeque<>());
    synchronized (q) {
      q.add(new Pick(System.currentTimeMillis(), policy.bytes()));
    }
    return d;
  }

  /** The least-loaded policy ({@link PlacementPolicy#leastLoaded()}). */
  static final PlacementPolicy LEAST_LOADED = new PlacementPolicy() {
    @Override
    public DeviceInfo choose(List<DeviceInfo> candidates, Placements placements) {
      return lowest(candidates, d -> d.getLoad() + placements.pending(d));
    }

    @Override
    public String toString() {
      return "least-loaded";
    }
  };

  /** {@link PlacementPolicy#memoryFit}. */
  static final class MemoryFit implements PlacementPolicy {
    private final long bytes;

    MemoryFit(long bytes) {
      this.bytes = bytes;
    }

    @Override
    public DeviceInfo choose(List<DeviceInfo> candidates, Placements placements) {
      List<DeviceInfo> fit = new ArrayList<>();
      for (DeviceInfo d : candidates) {
        if (d.getFreeMemory() - placements.pendingBytes(d) >= bytes) {
          fit.add(d);
        }
      }
      if (fit.isEmpty()) {
        throw new CudaException(FailureCode.OUT_OF_MEMORY, "none of the " + candidates.size()
          + " ready devices has " + bytes + " bytes free");
      }
      return lowest(fit, d -> -(d.getFreeMemory() - placements.pendingBytes(d)));
    }

    @Override
    public long bytes() {
      return bytes;
    }

    @Override
    public String toString() {
      return "memory-fit(" + bytes + " bytes)";
    }
  }

  /** A filter in front of another policy ({@link PlacementPolicy#libraryPresent}). */
  static final class Filtered implements PlacementPolicy {
    private final Predicate<DeviceInfo> keep;
    private final String what;
    private final PlacementPolicy then;

    Filtered(Predicate<DeviceInfo> keep, String what, PlacementPolicy then) {
      this.keep = keep;
      this.what = what;
      this.then = then;
    }

    @Override
    public DeviceInfo choose(List<DeviceInfo> candidates, Placements placements) {
      List<DeviceInfo> kept = new ArrayList<>();
      for (DeviceInfo d : candidates) {
        if (keep.test(d)) {
          kept.add(d);
        }
      }
      return kept.isEmpty() ? null : then.choose(kept, placements);
    }

    @Override
    public long bytes() {
      return then.bytes();
    }

    @Override
    public String toString() {
      return what + ", then " + then;
    }
  }

  /** The candidate with the lowest score; ties broken at random. */
  static DeviceInfo lowest(List<DeviceInfo> candidates, ToLongFunction<DeviceInfo> score) {
    DeviceInfo best = null;
    long bestScore = Long.MAX_VALUE;
    int ties = 0;
    for (DeviceInfo d : candidates) {
      long s = score.applyAsLong(d);
      if (best == null || s < bestScore) {
        best = d;
        bestScore = s;
        ties = 1;
      } else if (s == bestScore && ThreadLocalRandom.current().nextInt(++ties) == 0) {
        best = d; // reservoir sampling: each tied candidate equally likely
      }
    }
    return best;
  }
}
