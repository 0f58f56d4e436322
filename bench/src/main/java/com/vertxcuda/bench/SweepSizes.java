package com.vertxcuda.bench;

import java.util.List;

/**
 * What each sweep of BenchMain covers, and how long a point may take. {@link #FULL} is for a GPU
 * (the bundle's bench stage); {@link #SMALL} runs on the host backend in seconds.
 *
 * @param payloads round-trip payloads, bytes (upload, then download back)
 * @param inFlight requests in flight from one event loop
 * @param eventLoops event loops, each with {@code inFlightPerLoop} in flight
 * @param concurrencyRequests timed requests per concurrency point
 * @param gemmSizes m = n = k of the GEMM sweep
 * @param coalesce GEMMs per message of the small-GEMM sweep (1: no coalescing)
 * @param smallGemms timed 64x64 GEMMs per coalescing point
 * @param batchedGemms the pointer-array batched GEMMs ({@code gemm.batched}): F32, each n x n x n over its members
 * @param copySizes copy sizes, bytes
 * @param hostCopySizes copy sizes of the sweep by host type (every Java array, Buffer and NIO buffer
 *        the client takes), bytes: a few runs each, the large points short
 * @param largeCopy the one size of the {@code copy.large} sweeps, bytes (measured whatever the budget)
 * @param fftLengths complex elements of one C2C transform
 * @param rngCounts uniform floats per request
 * @param fillRuns timed 1 KiB fill round trips of the hop sweep
 * @param recoveries deaths per recovery variant
 * @param secondsPerPoint time a point aims to take (its run count follows from one run's time)
 * @param minRuns fewest timed runs of a point
 * @param maxRuns most timed runs of a point
 * @param warmUpRounds rounds of mixed small requests before a path's first point (the JIT's warm-up)
 * @param budgetSeconds the run stops starting new points past this
 */
record SweepSizes(String name, List<Integer> payloads, List<Integer> inFlight, List<Integer> eventLoops,
                  int inFlightPerLoop, int concurrencyRequests, List<Integer> gemmSizes, List<Integer> coalesce,
                  int smallGemms, List<BatchedGemm> batchedGemms, List<Long> copySizes, List<Long> hostCopySizes,
                  long largeCopy, List<Integer> fftLengths, List<Long> rngCounts,
                  int fillRuns, int recoveries, double secondsPerPoint, int minRuns, int maxRuns, int warmUpRounds,
                  double budgetSeconds) {

  private static final int KIB = 1 << 10;
  private static final int MIB = 1 << 20;

  static final SweepSizes FULL = new SweepSizes("full",
    List.of(4, 64, KIB, 16 * KIB, 256 * KIB, 4 * MIB, 64 * MIB),
    List.of(1, 2, 4, 8, 16, 32, 64, 128, 256), List.of(1, 2, 4, 8), 16, 20_000,
    List.of(64, 128, 256, 512, 1024, 2048, 4096, 8192),
    List.of(1, 4, 16, 64, 256, 1024), 100_000, List.of(new BatchedGemm(64, 1024), new BatchedGemm(256, 256)),
    List.of(4L * KIB, 64L * KIB, (long) MIB, 4L * MIB, 16L * MIB, 256L * MIB, 1024L * MIB),
    List.of(64L * KIB, (long) MIB, 4L * MIB, 16L * MIB, 256L * MIB), 1024L * MIB,
    List.of(1 << 8, 1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24),
    List.of(1L << 10, 1L << 14, 1L << 18, 1L << 22, 1L << 26, 1L << 28),
    20_000, 5, 0.25, 10, 20_000, 300, 200);

  static final SweepSizes SMALL = new SweepSizes("small",
    List.of(4, 64, KIB, 16 * KIB, 256 * KIB),
    List.of(1, 4, 16, 64), List.of(1, 2), 8, 2_000,
    List.of(64, 128, 256),
    List.of(1, 16, 64), 200, List.of(new BatchedGemm(16, 256), new BatchedGemm(64, 16)),
    List.of(4L * KIB, 64L * KIB, (long) MIB), List.of(64L * KIB, (long) MIB), 16L * MIB,
    List.of(1 << 8, 1 << 10, 1 << 12),
    List.of(1L << 10, 1L << 14, 1L << 18),
    500, 1, 0.01, 5, 300, 20, 90);

  /** One point of {@code gemm.batched}: {@code members} F32 GEMMs of n x n x n in one call. */
  record BatchedGemm(int n, int members) {

    /** The series' variant: the precision and the shape. */
    String variant() {
      return "F32 " + n + "x" + n;
    }
  }

  static SweepSizes named(String name) {
    switch (name) {
      case "full":
        return FULL;
      case "small":
        return SMALL;
      default:
        throw new IllegalArgumentException("--size is small or full, not " + name);
    }
  }

  int largestPayload() {
    return payloads.stream().mapToInt(Integer::intValue).max().orElse(0);
  }

  long largestCopy() {
    return copySizes.stream().mapToLong(Long::longValue).max().orElse(0);
  }
}
