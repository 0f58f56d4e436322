package com.vertxcuda.bench;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.bench.result.Series;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.device.context.BackendSelection;
import com.vertxcuda.device.context.ContextTier;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.DeviceMemory;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.message.AllocRequest;
import com.vertxcuda.message.FillRequest;
import com.vertxcuda.message.FreeRequest;
import io.vertx.core.Vertx;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;
import org.HdrHistogram.Histogram;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;

import static com.vertxcuda.bench.Await.await;

/**
 * Sweep {@code roundtrip.fill}: a 1 KiB fill answered when the device is done, one hop added at a
 * time, each with its latency distribution. Raw memset + synchronize (and the same completed by a
 * host function); fill + completion seen by the context's own completion path; fill submitted
 * straight into the context tier's queue (no event bus, no device verticle); through the device
 * verticle with a typed client. Each hop is a headline point, measured {@link Bench#REPEATS} times. With
 * {@code diagnostic.park}: what a 50 µs timed park really takes here (why the hand-off threads spin
 * before they park).
 */
final class HopsSection implements Section {

  static final String SWEEP = "roundtrip.fill";
  private static final int BYTES = 1024;

  @Override
  public String name() {
    return "hops";
  }

  private static Plan plan(Bench bench) {
    return new Plan(bench.sizes.fillRuns() / 10, bench.sizes.fillRuns());
  }

  @Override
  public void raw(Bench bench, RawJCuda raw) throws Exception {
    CUdeviceptr p = raw.alloc(BYTES);
    Plan plan = plan(bench);
    List<Histogram> h = Bench.measure(true, () -> Histograms.loop(plan, i -> {
      JCudaDriver.cuMemsetD8Async(p, (byte) i, BYTES, raw.stream);
      raw.sync();
    }));
    bench.latency(series(bench, "raw-jcuda", "memset + synchronize"), BYTES, "1 KiB", plan, h, true);
    HostFunctionWait wait = new HostFunctionWait(raw);
    h = Bench.measure(true, () -> Histograms.loop(plan, i -> {
      JCudaDriver.cuMemsetD8Async(p, (byte) i, BYTES, raw.stream);
      wait.await();
    }));
    bench.latency(series(bench, "raw-jcuda", "memset + host function"), BYTES, "1 KiB", plan, h, true);
    raw.free(p);
  }

  /**
   * The hops below the device verticle, in this JVM: the backend's context alone, then the context
   * tier. For in-process runs only (neither depends on the isolation mode).
   */
  @Override
  public void belowTheVerticle(Bench bench, DeviceOptions options) throws Exception {
    DeviceContext context = BackendSelection.select(options).open(options.getDevice());
    try {
      GpuStream stream = context.createStream("bench");
      DeviceMemory memory = context.allocate(BYTES);
      Plan plan = plan(bench);
      List<Histogram> h = Bench.measure(true, () -> Histograms.loop(plan, i -> {
        context.fill(stream, memory, 0, BYTES, 1, i & 0xFF);
        awaitCompletion(context, stream);
      }));
      bench.latency(series(bench, "context", "fill + completion"), BYTES, "1 KiB", plan, h, true);
      context.release(memory);
    } finally {
      context.close(false);
    }
    tier(bench, TierRoundTrips.Tier.IN_PROCESS, options);
    Plan parks = new Plan(100, 2_000);
    Histogram h = Histograms.loop(parks, i -> LockSupport.parkNanos(50_000));
    bench.latency(bench.record.series("diagnostic.park", "diagnostic", "parkNanos", "latency", "us",
      "requested park", "us"), 50, "50 us", parks, h, false);
  }

  /** Records an event after the work queued on {@code stream} and spins until the context's completion path sees it. */
  static void awaitCompletion(DeviceContext context, GpuStream stream) throws Exception {
    GpuEvent e = context.record(stream);
    CompletableFuture<Void> done = context.whenComplete(e);
    while (!done.isDone()) {
      Thread.onSpinWait();
    }
    e.release();
  }

  /** In the process run: the same fills through a process tier of its own ({@link TierRoundTrips.Tier#PROCESS}). */
  @Override
  public void alone(Bench bench, DeviceOptions options) throws Exception {
    if (options.getIsolation() == Isolation.PROCESS) {
      tier(bench, TierRoundTrips.Tier.PROCESS, options);
    }
  }

  /** Fills submitted straight into a context tier's queue, one at a time from this thread, which waits for each answer spinning ({@link TierRoundTrips#sequential}). */
  private static void tier(Bench bench, TierRoundTrips.Tier kind, DeviceOptions options) throws Exception {
    Vertx vertx = DeployedDevice.newVertx();
    try {
      ContextTier tier = await(kind.launch(vertx, new DeviceOptions(options).setLibraries(List.of())));
      BufferHandle h = (BufferHandle) await(TierRoundTrips.direct(tier, null, new AllocRequest(DType.U8, BYTES)));
      Plan plan = plan(bench);
      List<Histogram> hist = Bench.measure(true, () -> TierRoundTrips.sequential(tier, plan, null,
        i -> FillRequest.ofInteger(h, i & 0x7F)));
      bench.latency(series(bench, kind.path, "fill"), BYTES, "1 KiB", plan, hist, true);
      await(TierRoundTrips.direct(tier, null, new FreeRequest(h)));
      await(tier.stop());
    } finally {
      await(vertx.close());
    }
  }

  @Override
  public void toolkit(Bench bench, DeployedDevice d) throws Exception {
    BufferHandle h = await(d.device.alloc(DType.U8, BYTES));
    Plan plan = plan(bench);
    List<Histogram> hist = Bench.measure(true, () -> Histograms.sequential(d.vertx, plan,
      i -> d.device.fillInteger(h, i & 0x7F)));
    bench.latency(series(bench, d.path, "fill"), BYTES, "1 KiB", plan, hist, true);
    await(d.device.free(h));
  }

  private static Series series(Bench bench, String path, String variant) {
    return bench.record.series(SWEEP, path, variant, "latency", "us", "payload", "B");
  }
}
