package com.vertxcuda.bench;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.bench.result.Series;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.internal.LoopGaps;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;
import org.HdrHistogram.Histogram;

import java.nio.FloatBuffer;
import java.util.List;
import java.util.function.IntFunction;

import static com.vertxcuda.bench.Await.await;

/**
 * Sweeps {@code copy.large.h2d} and {@code copy.large.d2h}: the large copies the headline table
 * holds to their goals, at one size ({@link SweepSizes#largeCopy()}: 1 GiB, 16 MiB with
 * {@code --size small}), always measured whatever the time budget left the {@code copy} sweep.
 * Raw JCuda, pinned and pageable (and D2H into pinned memory allocated for each copy: what fresh pinned
 * memory costs); the toolkit on a device of its own deployed with default
 * {@link DeviceOptions} (only the run's backend and isolation set), as an application that tunes
 * nothing gets it: {@code download} (the lent buffer handed back after each; and once, before
 * anything else of the toolkit ran in the JVM, as its first: {@link #firstUse}), an upload from a
 * transfer buffer where the device lends one that large (else from a direct Buffer), from a heap
 * Buffer, {@code downloadFloats}, and {@code downloadInto} a {@code float[]} kept from run to run
 * (the same copies without a new array), beside the JVM's own {@code new float[]} of that size (path
 * {@code diagnostic}: what a new array costs before anything is copied into it). Each point but the
 * first use: one warm-up run, then {@link Bench#REPEATS} repeats of a few timed runs. Each of the
 * toolkit's points also says, in {@code copy.large.loop}, how long the event loop the copies are made
 * from (the caller's) stopped during its timed runs, beside a plain thread ({@link LoopGaps}).
 */
final class LargeCopySection implements Section {

  static final String H2D = "copy.large.h2d";
  static final String D2H = "copy.large.d2h";
  /** The widest stop of the caller's event loop during each toolkit point of the two sweeps above. */
  static final String LOOP = "copy.large.loop";
  /** Timed runs of one repeat; fewer where the warm-up run took past {@link #SLOW_RUN_NANOS}. */
  private static final int RUNS = 5;
  private static final int SLOW_RUNS = 3;
  /**
   * A large copy takes from tens of ms (pinned) to half a second (staged on a slow host): a warm-up run
   * past this marks a slow path, whose fewer runs keep the section within its time.
   */
  private static final long SLOW_RUN_NANOS = 200_000_000L;
  /** Where the JVM anchor's arrays go, so that no allocation is optimised away. */
  private static volatile float[] newArray;

  @Override
  public String name() {
    return "copy.large";
  }

  @Override
  public void raw(Bench bench, RawJCuda raw) throws Exception {
    long n = bench.sizes.largeCopy();
    CUdeviceptr dev = raw.alloc(n);
    Pointer pinned = raw.pinned(n);
    Pointer array = Pointer.to(new byte[(int) n]);
    point(bench, series(bench, H2D, "raw-jcuda", "pinned"), n, i -> {
      JCudaDriver.cuMemcpyHtoDAsync(dev, pinned, n, raw.stream);
      raw.sync();
    });
    point(bench, series(bench, H2D, "raw-jcuda", "pageable"), n, i -> JCudaDriver.cuMemcpyHtoD(dev, array, n));
    point(bench, series(bench, D2H, "raw-jcuda", "pinned"), n, i -> {
      JCudaDriver.cuMemcpyDtoHAsync(pinned, dev, n, raw.stream);
      raw.sync();
    });
    point(bench, series(bench, D2H, "raw-jcuda", "pageable"), n, i -> JCudaDriver.cuMemcpyDtoH(array, dev, n));
    // What a landing of fresh pinned memory costs (the driver pins and zeroes every page): the floor
    // of a first download that lands in pinned memory grown for it (the toolkit's "the JVM's first").
    point(bench, series(bench, D2H, "raw-jcuda", "pinned, allocated for each copy"), n, i -> {
      Pointer fresh = raw.pinned(n);
      try {
        JCudaDriver.cuMemcpyDtoHAsync(fresh, dev, n, raw.stream);
        raw.sync();
      } finally {
        raw.freePinned(fresh);
      }
    });
    raw.freePinned(pinned);
    raw.free(dev);
  }

  /**
   * This JVM's first download of the large size, one run before anything else of the toolkit ran
   * here: the pooled host memory it lands in is made for it (the points after reuse that memory;
   * users see this once per size class).
   */
  @Override
  public void firstUse(Bench bench, DeviceOptions options) throws Exception {
    DeviceOptions defaults = new DeviceOptions().setBackend(options.getBackend()).setIsolation(options.getIsolation());
    int n = (int) bench.sizes.largeCopy();
    try (DeployedDevice d = DeployedDevice.deploy(defaults)) {
      BufferHandle bytes = await(d.device.alloc(DType.U8, n));
      Plan once = new Plan(0, 1);
      bench.bandwidth(series(bench, D2H, d.path, "lent buffer, the JVM's first"), n, once,
        Histograms.sequential(d.vertx, once, i -> d.device.download(bytes).map(d.verticle::releaseTransferBuffer)));
      await(d.device.free(bytes));
    }
  }

  @Override
  public void alone(Bench bench, DeviceOptions options) throws Exception {
    DeviceOptions defaults = new DeviceOptions().setBackend(options.getBackend()).setIsolation(options.getIsolation());
    int n = (int) bench.sizes.largeCopy();
    try (DeployedDevice d = DeployedDevice.deploy(defaults)) {
      bench.progress("%s: a device with default options, %s", name(), d.path);
      BufferHandle bytes = await(d.device.alloc(DType.U8, n));
      point(bench, d, series(bench, D2H, d.path, "lent buffer"), n,
        i -> d.device.download(bytes).map(d.verticle::releaseTransferBuffer));
      uploadFromTheBestBuffer(bench, d, bytes, n);
      Buffer heap = Buffer.buffer(new byte[n]);
      point(bench, d, series(bench, H2D, d.path, "heap"), n, i -> d.device.upload(bytes, heap));
      await(d.device.free(bytes));
      // F32, one device buffer at a time: the host backend's default memory holds no more.
      BufferHandle floats = await(d.device.alloc(DType.F32, n / 4));
      // The JVM alone, in this JVM at this point: a new float[] of the same size and nothing copied
      // (the heap commits and zeroes it on the allocating thread). downloadFloats makes one.
      point(bench, series(bench, D2H, "diagnostic", "the JVM: new float[] alone"), n, i -> newArray = new float[n / 4]);
      newArray = null;
      point(bench, d, series(bench, D2H, d.path, "float[]"), n, i -> d.device.downloadFloats(floats));
      // The same copies into one array kept from run to run: what a new array costs (the JVM zeroes
      // it in one thread before anything is copied into it) is the difference.
      float[] kept = new float[n / 4];
      point(bench, d, series(bench, D2H, d.path, "float[] kept"), n,
        i -> d.device.downloadInto(floats, FloatBuffer.wrap(kept)));
      await(d.device.free(floats));
    }
  }

  /**
   * An upload from a transfer buffer where the device lends one of {@code n} bytes (in process
   * isolation the default region lends at most half its 1 GiB), else from a direct Buffer; the
   * variant says which, and the record notes why.
   */
  private static void uploadFromTheBestBuffer(Bench bench, DeployedDevice d, BufferHandle h, int n) throws Exception {
    Buffer transfer;
    try {
      transfer = d.verticle.allocateTransferBuffer(n);
    } catch (CudaException e) {
      transfer = null;
      bench.record.skip(H2D, d.path, "transfer buffer of " + Bench.bytes(n) + " with default options: "
        + e.getMessage() + " (measured from a direct Buffer instead)");
    }
    if (transfer != null) {
      Buffer data = transfer.appendBytes(new byte[n]);
      point(bench, d, series(bench, H2D, d.path, "transfer buffer"), n, i -> d.device.upload(h, data));
      d.verticle.releaseTransferBuffer(data);
      return;
    }
    CopySection.withDirectBuffer(n, data -> point(bench, d, series(bench, H2D, d.path, "direct Buffer"), n,
      i -> d.device.upload(h, data)));
  }

  private static void point(Bench bench, Series s, long bytes, Histograms.Op copy) throws Exception {
    long warmUp = Histograms.loop(new Plan(0, 1), copy).getMaxValue();
    Plan plan = new Plan(0, warmUp > SLOW_RUN_NANOS ? SLOW_RUNS : RUNS);
    bench.bandwidth(s, bytes, 1, Bench.measure(true, () -> Histograms.loop(plan, copy)));
  }

  private static void point(Bench bench, DeployedDevice d, Series s, long bytes, IntFunction<Future<?>> copy)
    throws Exception {
    long warmUp = Histograms.sequential(d.vertx, new Plan(0, 1), copy).getMaxValue();
    Plan plan = new Plan(0, warmUp > SLOW_RUN_NANOS ? SLOW_RUNS : RUNS);
    // The caller's loop: each measurement makes its copies from a context of its own, which its first
    // call moves the watch to; the call's own time on the loop counts too.
    LoopGaps loop = new LoopGaps(d.vertx);
    List<Histogram> repeats;
    try {
      repeats = Bench.measure(true, () -> Histograms.sequential(d.vertx, plan, i -> {
        if (i == 0) {
          loop.tick();
        }
        Future<?> f = copy.apply(i);
        loop.mark();
        return f;
      }));
    } finally {
      loop.stop();
    }
    bench.bandwidth(s, bytes, 1, repeats);
    long runs = repeats.stream().mapToLong(Histogram::getTotalCount).sum();
    String variant = (s.sweep().equals(D2H) ? "download, " : "upload, ") + s.variant();
    Series stall = bench.record.series(LOOP, d.path, variant, "time", "ms", "copy size", "B");
    stall.add(bytes, runs, 1, loop.widestMs()).put("extra", new JsonObject().put("controlMs", Series.round(loop.controlMs())));
    bench.progress("%-22s %-18s %-28s %8s: caller's loop stopped %.1f ms at most (a plain thread beside it: %.1f ms; "
      + "%d runs)", LOOP, d.path, variant, Bench.bytes(bytes), loop.widestMs(), loop.controlMs(), runs);
  }

  private static Series series(Bench bench, String sweep, String path, String variant) {
    return bench.record.series(sweep, path, variant, "bandwidth", "GB/s", "copy size", "B");
  }
}
