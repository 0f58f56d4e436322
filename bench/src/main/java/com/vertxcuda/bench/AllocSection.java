package com.vertxcuda.bench;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.bench.result.Series;
import io.vertx.core.Future;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;
import org.HdrHistogram.Histogram;

import java.util.function.BiFunction;

import static com.vertxcuda.bench.Await.await;

/**
 * Sweeps {@code alloc.small} and {@code alloc.large}: what a new buffer costs, zeroed (the default)
 * and uninitialized (the opt-in that skips the zeroing). Small: an alloc of 1 KiB answered, then its
 * free, one at a time. Large: an alloc of the run's large copy size (1 GiB in a full run) (a cached block after the first) and its first use
 * (a 4-byte download, which waits for the zeroing), one at a time. Raw JCuda: the memset alone,
 * enqueued and synchronised, at both sizes — what the zeroing adds on the GPU.
 */
final class AllocSection implements Section {

  private static final long SMALL = 1 << 10;

  @Override
  public String name() {
    return "alloc";
  }

  @Override
  public void raw(Bench bench, RawJCuda raw) {
    Series s = bench.record.series("alloc.small", "raw-jcuda", "cuMemsetD32Async + sync (the zeroing alone)",
      "latency", "us", "bytes", "B");
    memset(bench, raw, s, SMALL, plan(bench, false));
    Series l = bench.record.series("alloc.large", "raw-jcuda", "cuMemsetD32Async + sync (the zeroing alone)",
      "latency", "us", "bytes", "B");
    if (bench.inBudget(l.sweep(), l.path(), Bench.bytes(bench.sizes.largeCopy()))) {
      memset(bench, raw, l, bench.sizes.largeCopy(), plan(bench, true));
    }
  }

  private static void memset(Bench bench, RawJCuda raw, Series s, long bytes, Plan plan) {
    CUdeviceptr p = raw.alloc(bytes);
    try {
      Histogram h = Histograms.create();
      for (int i = 0; i < plan.total(); i++) {
        long t0 = System.nanoTime();
        JCudaDriver.cuMemsetD32Async(p, 0, bytes / 4, raw.stream);
        raw.sync();
        if (i >= plan.warmup()) {
          h.recordValue(Math.max(1, System.nanoTime() - t0));
        }
      }
      bench.latency(s, bytes, "", plan, h, false);
    } finally {
      raw.free(p);
    }
  }

  @Override
  public void toolkit(Bench bench, DeployedDevice d) throws Exception {
    for (boolean zeroed : new boolean[] {true, false}) {
      String variant = zeroed ? "alloc (zeroed) + free" : "allocUninitialized + free";
      Series s = bench.record.series("alloc.small", d.path, variant, "latency", "us", "bytes", "B");
      if (bench.inBudget(s.sweep(), d.path, variant)) {
        small(bench, d, s, zeroed);
      }
    }
    for (boolean zeroed : new boolean[] {true, false}) {
      String variant = zeroed ? "alloc (zeroed) + first use" : "allocUninitialized + first use";
      Series l = bench.record.series("alloc.large", d.path, variant, "latency", "us", "bytes", "B");
      if (bench.inBudget(l.sweep(), d.path, variant)) {
        large(bench, d, l, zeroed);
      }
    }
  }

  private static BiFunction<DType, Long, Future<BufferHandle>> alloc(DeployedDevice d, boolean zeroed) {
    return zeroed ? d.device::alloc : d.device::allocUninitialized;
  }

  /** The alloc's own round trip, one at a time; each buffer freed before the next. */
  private static void small(Bench bench, DeployedDevice d, Series s, boolean zeroed) throws Exception {
    Plan plan = plan(bench, false);
    BiFunction<DType, Long, Future<BufferHandle>> alloc = alloc(d, zeroed);
    Histogram h = Histograms.create();
    for (int i = 0; i < plan.total(); i++) {
      long t0 = System.nanoTime();
      BufferHandle b = await(alloc.apply(DType.U8, SMALL));
      long t1 = System.nanoTime();
      await(d.device.free(b));
      if (i >= plan.warmup()) {
        h.recordValue(Math.max(1, t1 - t0));
      }
    }
    bench.latency(s, SMALL, zeroed ? "zeroed" : "uninitialized", plan, h, false);
  }

  /** A large alloc and a 4-byte download from it (its first use waits for the zeroing). */
  private static void large(Bench bench, DeployedDevice d, Series s, boolean zeroed) throws Exception {
    Plan plan = plan(bench, true);
    BiFunction<DType, Long, Future<BufferHandle>> alloc = alloc(d, zeroed);
    long bytes = bench.sizes.largeCopy();
    Histogram h = Histograms.create();
    for (int i = 0; i < plan.total(); i++) {
      long t0 = System.nanoTime();
      BufferHandle b = await(alloc.apply(DType.F32, bytes / 4));
      await(d.device.download(b.view(b.length() - 1, 1)));
      long t1 = System.nanoTime();
      await(d.device.free(b));
      if (i >= plan.warmup()) {
        h.recordValue(Math.max(1, t1 - t0));
      }
    }
    bench.latency(s, bytes, zeroed ? "zeroed" : "uninitialized", plan, h, false);
  }

  private static Plan plan(Bench bench, boolean large) {
    boolean full = SweepSizes.FULL.name().equals(bench.sizes.name());
    if (large) {
      return full ? new Plan(3, 20) : new Plan(1, 3);
    }
    return full ? new Plan(500, 5_000) : new Plan(50, 500);
  }
}
