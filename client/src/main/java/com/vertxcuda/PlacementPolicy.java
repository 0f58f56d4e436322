package com.vertxcuda;


import java.util.Comparator;
import java.util.List;

/**
 * How a client picks a device ({@link DeviceRegistry#choose}, {@link DeviceClient#create(io.vertx.core.Vertx, PlacementPolicy)}).
 *
 * <p>A policy sees the ready devices of the nodes in the cluster, with the load and free memory
 * each published last (devices publish on change, at most every
 * {@code DeviceOptions.registryMinInterval} ms), and {@link Placements}: what this JVM has placed on
 * each device since that publication. Counting its own recent picks is what keeps a burst of
 * concurrent choosers in one JVM from all picking the device that looked least loaded; ties are
 * broken at random, which spreads choosers of different JVMs.
 */
@FunctionalInterface
public interface PlacementPolicy {

  /**
   * Picks one of {@code candidates} (ready devices of cluster members, in address order, never
   * empty), or returns null when none will do; it may also throw a {@link CudaException} naming why.
   */
  DeviceInfo choose(List<DeviceInfo> candidates, Placements placements);

  /** Bytes a pick of this policy is expected to take (counted against the device's free memory until it publishes again). */
  default long bytes() {
    return 0;
  }

  /** The device with the least load (published load plus this JVM's picks since); ties at random. */
  static PlacementPolicy leastLoaded() {
    return Placements.LEAST_LOADED;
  }

  /** Each device in turn, in address order (the turn is this JVM's). */
  static PlacementPolicy roundRobin() {
    // In address order: the registry lists devices in no fixed order, and turns over a list whose
    // order changes between picks do not go round.
    return (candidates, placements) -> candidates.stream().sorted(Comparator.comparing(DeviceInfo::getAddress))
      .skip(Math.floorMod(placements.nextTurn(), (long) candidates.size())).findFirst().orElseThrow();
  }

  /**
   * A device with room for {@code bytes} more: the one with the most free memory (less what this
   * JVM's picks since its publication are expected to take); OUT_OF_MEMORY when none has room.
   */
  static PlacementPolicy memoryFit(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("bytes must be >= 0, got " + bytes);
    }
    return new Placements.MemoryFit(bytes);
  }

  /** A device whose context serves {@code library}, chosen among those by {@code then}. */
  static PlacementPolicy libraryPresent(Library library, PlacementPolicy then) {
    return new Placements.Filtered(d -> d.getLibraries() != null && d.getLibraries().contains(library.suffix()),
      "serves " + library.suffix(), then);
  }

  /** The least-loaded device whose context serves {@code library}. */
  static PlacementPolicy libraryPresent(Library library) {
    return libraryPresent(library, leastLoaded());
  }
}
