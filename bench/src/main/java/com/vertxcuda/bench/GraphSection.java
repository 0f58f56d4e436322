package com.vertxcuda.bench;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.Library;
import com.vertxcuda.PipelineHandle;
import com.vertxcuda.PipelineRecorder;
import com.vertxcuda.bench.result.Series;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.blas.BlasClientOptions;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.kernel.KernelClient;
import com.vertxcuda.kernel.KernelOp;
import com.vertxcuda.kernel.KernelRequest;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.UnaryOperator;

import static com.vertxcuda.bench.Await.await;

/**
 * Sweep {@code graph.pipeline}: a 10-step pipeline of small operations on F32 buffers of the swept
 * size (fills, a device copy, cuBLAS AXPY and SCAL, built-in ADD and SCALE kernels, on three
 * streams) sent as 10 individual requests, back to back, the pipeline done when all 10 are
 * answered; against the same steps recorded once and replayed as one request (one CUDA graph launch
 * on cuda, step by step on the host backend); and the 10 requests each sent when the one before is
 * answered ("each awaited"). All one pipeline at a time from one event loop, in
 * the same run; the replay's point carries the speedups ({@code extra.speedupP50},
 * {@code extra.speedupP99}: individual over replay) and {@code extra.captured} (1: a CUDA graph).
 */
final class GraphSection implements Section {

  static final String SWEEP = "graph.pipeline";
  static final int STEPS = 10;
  private static final int KIB = 1 << 10;

  @Override
  public String name() {
    return "graph";
  }

  private static List<Integer> sizes(Bench bench) {
    return "full".equals(bench.sizes.name()) ? List.of(KIB, 16 * KIB, 64 * KIB) : List.of(KIB, 16 * KIB);
  }

  private static Plan plan(Bench bench) {
    int runs = Math.max(bench.sizes.minRuns(), bench.sizes.fillRuns() / 4);
    return new Plan(Math.max(3, runs / 10), runs);
  }

  /**
   * The ten steps: each a library and its request body, or one of the device's own operations (a
   * fill, a copy) as how to record it and how to send it.
   */
  record Step(Library library, Object body, UnaryOperator<PipelineRecorder> recordOwn,
              Function<DeviceClient, Future<?>> sendOwn) {
    static Step of(Library library, Object body) {
      return new Step(library, body, null, null);
    }

    static Step fill(BufferHandle h, float value) {
      return new Step(null, null, r -> r.fill(h, value), d -> d.fill(h, value));
    }

    static Step copy(BufferHandle source, BufferHandle target) {
      return new Step(null, null, r -> r.copy(source, target), d -> d.copy(source, target));
    }
  }

  static List<Step> steps(BufferHandle x, BufferHandle y, BufferHandle z, int n) {
    List<Step> s = new ArrayList<>();
    s.add(Step.fill(x, 1));
    s.add(Step.fill(y, 2));
    s.add(Step.of(Library.BLAS, new BlasRequest(BlasOp.AXPY).setN(n).setAlpha(0.5).setX(x).setY(y)));
    s.add(Step.of(Library.BLAS, new BlasRequest(BlasOp.SCAL).setN(n).setAlpha(0.5).setX(x)));
    s.add(Step.of(Library.KERNEL, new KernelRequest(KernelOp.ADD).setX(x).setY(y).setOutput(z)));
    s.add(Step.of(Library.KERNEL, new KernelRequest(KernelOp.SCALE).setX(z).setScalar(0.5).setOutput(z)));
    s.add(Step.copy(z, x));
    s.add(Step.of(Library.BLAS, new BlasRequest(BlasOp.AXPY).setN(n).setAlpha(0.5).setX(x).setY(y)));
    s.add(Step.of(Library.KERNEL, new KernelRequest(KernelOp.ADD).setX(x).setY(y).setOutput(z)));
    s.add(Step.of(Library.BLAS, new BlasRequest(BlasOp.SCAL).setN(n).setAlpha(0.25).setX(y)));
    return s;
  }

  /**
   * What the steps leave in z (every element): y = 2.5, x = 0.5, z = 3, z = 1.5, x = 1.5,
   * y = 3.25, z = 4.75 (all exact in F32).
   */
  static final float EXPECTED_Z = 4.75f;

  @Override
  public void toolkit(Bench bench, DeployedDevice d) throws Exception {
    DeviceClient device = d.device;
    BlasClient blas = BlasClient.create(d.vertx, new DeviceClientOptions(), new BlasClientOptions().setCoalesce(false));
    KernelClient kernels = KernelClient.create(d.vertx);
    Series alone = series(bench, d.path, STEPS + " requests");
    Series chained = series(bench, d.path, STEPS + " requests, each awaited");
    Series replayed = series(bench, d.path, "replay");
    for (int bytes : sizes(bench)) {
      if (!bench.inBudget(SWEEP, d.path, Bench.bytes(bytes))) {
        break;
      }
      int n = bytes / 4;
      BufferHandle x = await(device.alloc(DType.F32, n));
      BufferHandle y = await(device.alloc(DType.F32, n));
      BufferHandle z = await(device.alloc(DType.F32, n));
      List<Step> steps = steps(x, y, z, n);
      PipelineRecorder recorder = device.record();
      for (Step s : steps) {
        if (s.library() != null) {
          recorder.step(s.library(), s.body());
        } else {
          s.recordOwn().apply(recorder);
        }
      }
      PipelineHandle pipeline = await(recorder.build());
      bench.progress("%s %s %s: pipeline recorded, %s", SWEEP, d.path, Bench.bytes(bytes),
        pipeline.captured() ? "captured as a CUDA graph" : "replayed step by step");

      Plan plan = plan(bench);
      Histogram individual = Histograms.sequential(d.vertx, plan, i -> sendAll(device, blas, kernels, steps));
      check(device, z, "10 requests");
      await(device.fill(z, 0));
      Histogram oneByOne = Histograms.sequential(d.vertx, plan, i -> sendChained(device, blas, kernels, steps, 0));
      check(device, z, "10 requests, each awaited");
      await(device.fill(z, 0));
      Histogram replay = Histograms.sequential(d.vertx, plan, i -> device.replay(pipeline));
      check(device, z, "replay");

      bench.latency(alone, bytes, Bench.bytes(bytes), plan, individual, false);
      bench.latency(chained, bytes, Bench.bytes(bytes), plan, oneByOne, false);
      JsonObject p = bench.latency(replayed, bytes, Bench.bytes(bytes), plan, replay, false);
      double p50 = Histograms.p50(individual) / Histograms.p50(replay);
      double p99 = individual.getValueAtPercentile(99) / (double) replay.getValueAtPercentile(99);
      p.put("extra", new JsonObject().put("speedupP50", Series.round(p50)).put("speedupP99", Series.round(p99))
        .put("captured", pipeline.captured() ? 1 : 0).put("steps", STEPS)
        .put("speedupP50AgainstAwaited", Series.round(Histograms.p50(oneByOne) / Histograms.p50(replay))));
      bench.progress("%s %s %s: replay is %.2fx faster at p50, %.2fx at p99 (%s)", SWEEP, d.path, Bench.bytes(bytes),
        p50, p99, pipeline.captured() ? "CUDA graph" : "step by step");
      await(device.release(pipeline));
      await(device.free(x));
      await(device.free(y));
      await(device.free(z));
    }
  }

  /** The ten steps as ten requests, sent back to back; done when all are answered. */
  private static Future<?> sendAll(DeviceClient device, BlasClient blas, KernelClient kernels, List<Step> steps) {
    List<Future<?>> all = new ArrayList<>(steps.size());
    for (Step s : steps) {
      all.add(send(device, blas, kernels, s));
    }
    return Future.all(all);
  }

  /** The ten steps as ten requests, each sent when the one before it has been answered. */
  private static Future<?> sendChained(DeviceClient device, BlasClient blas, KernelClient kernels, List<Step> steps,
                                       int from) {
    if (from == steps.size()) {
      return Future.succeededFuture();
    }
    return send(device, blas, kernels, steps.get(from)).compose(r -> sendChained(device, blas, kernels, steps, from + 1));
  }

  private static Future<?> send(DeviceClient device, BlasClient blas, KernelClient kernels, Step s) {
    if (s.library() == null) {
      return s.sendOwn().apply(device);
    }
    return s.library() == Library.BLAS ? blas.execute((BlasRequest) s.body()) : kernels.execute((KernelRequest) s.body());
  }

  // Both ways must leave what the steps compute.
  private static void check(DeviceClient device, BufferHandle z, String what) throws Exception {
    float[] got = await(device.downloadFloats(z));
    for (int i = 0; i < got.length; i++) {
      if (got[i] != EXPECTED_Z) {
        throw new IllegalStateException(what + " left z[" + i + "] = " + got[i] + ", not " + EXPECTED_Z);
      }
    }
  }

  private static Series series(Bench bench, String path, String variant) {
    return bench.record.series(SWEEP, path, variant, "latency", "us", "buffer", "B");
  }
}
