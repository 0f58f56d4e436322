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
import com.vertxcuda.fft.FftClient;
import com.vertxcuda.fft.FftRequest;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.kernel.KernelClient;
import com.vertxcuda.kernel.KernelOp;
import com.vertxcuda.kernel.KernelRequest;
import com.vertxcuda.rand.Distribution;
import com.vertxcuda.rand.RandClient;
import com.vertxcuda.rand.RandRequest;
import com.vertxcuda.rand.RngType;
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
 * answered ("each awaited"). Sweep {@code graph.spectral} does the same with a 10-step pipeline of
 * FFT and RNG steps (uniforms and normals, R2C and C2R transforms, complex products, built-in
 * kernels, on four streams). All one pipeline at a time from one event loop, in
 * the same run; the replay's point carries the speedups ({@code extra.speedupP50},
 * {@code extra.speedupP99}: individual over replay) and {@code extra.captured} (1: a CUDA graph).
 */
final class GraphSection implements Section {

  static final String SWEEP = "graph.pipeline";
  static final String SPECTRAL = "graph.spectral";
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

  /** The buffers of the spectral pipeline: n reals and their n / 2 + 1 complex bins. */
  record Spectral(BufferHandle r, BufferHandle c, BufferHandle c2, BufferHandle out, BufferHandle g) {
    static Spectral alloc(DeviceClient device, int n) throws Exception {
      int bins = n / 2 + 1;
      return new Spectral(await(device.alloc(DType.F32, n)), await(device.alloc(DType.C64, bins)),
        await(device.alloc(DType.C64, bins)), await(device.alloc(DType.F32, n)), await(device.alloc(DType.F32, n)));
    }

    List<BufferHandle> all() {
      return List.of(r, c, c2, out, g);
    }
  }

  /**
   * Ten FFT and RNG steps: r uniform, its spectrum squared and transformed back (out = r ⊛ r, r's
   * circular convolution with itself), normals added, then out's round trip through R2C and C2R
   * scaled by 1 / n into r: r ends equal to out, which {@link #checkSpectral} checks.
   */
  static List<Step> spectralSteps(Spectral b, int n) {
    List<Step> s = new ArrayList<>();
    s.add(Step.of(Library.RAND, new RandRequest().setGenerator(RngType.PHILOX4_32_10).setSeed(1).setOutput(b.r())));
    s.add(Step.of(Library.FFT, r2c(n, b.r(), b.c())));
    s.add(Step.of(Library.KERNEL, new KernelRequest(KernelOp.MULTIPLY).setX(b.c()).setY(b.c()).setOutput(b.c2())));
    s.add(Step.of(Library.FFT, c2r(n, b.c2(), b.out())));
    s.add(Step.of(Library.KERNEL, new KernelRequest(KernelOp.SCALE).setX(b.out()).setScalar(1.0 / n).setOutput(b.out())));
    s.add(Step.of(Library.RAND, new RandRequest().setGenerator(RngType.XORWOW).setSeed(2)
      .setDistribution(Distribution.NORMAL).setOutput(b.g())));
    s.add(Step.of(Library.KERNEL, new KernelRequest(KernelOp.ADD).setX(b.out()).setY(b.g()).setOutput(b.out())));
    s.add(Step.of(Library.FFT, r2c(n, b.out(), b.c())));
    s.add(Step.of(Library.FFT, c2r(n, b.c(), b.r())));
    s.add(Step.of(Library.KERNEL, new KernelRequest(KernelOp.SCALE).setX(b.r()).setScalar(1.0 / n).setOutput(b.r())));
    return s;
  }

  private static FftRequest r2c(int n, BufferHandle in, BufferHandle out) {
    return new FftRequest().setType(FftType.R2C).setN(List.of(n)).setInput(in).setOutput(out);
  }

  private static FftRequest c2r(int n, BufferHandle in, BufferHandle out) {
    return new FftRequest().setType(FftType.C2R).setN(List.of(n)).setInput(in).setOutput(out);
  }

  @Override
  public void toolkit(Bench bench, DeployedDevice d) throws Exception {
    Clients clients = new Clients(d.device,
      BlasClient.create(d.vertx, new DeviceClientOptions(), new BlasClientOptions().setCoalesce(false)),
      KernelClient.create(d.vertx), FftClient.create(d.vertx), RandClient.create(d.vertx));
    Variants small = new Variants(bench, SWEEP, d.path);
    for (int bytes : sizes(bench)) {
      if (!bench.inBudget(SWEEP, d.path, Bench.bytes(bytes))) {
        break;
      }
      int n = bytes / 4;
      BufferHandle x = await(d.device.alloc(DType.F32, n));
      BufferHandle y = await(d.device.alloc(DType.F32, n));
      BufferHandle z = await(d.device.alloc(DType.F32, n));
      measure(bench, d, clients, small, bytes, steps(x, y, z, n), what -> check(d.device, z, what), () -> d.device.fill(z, 0));
      for (BufferHandle h : List.of(x, y, z)) {
        await(d.device.free(h));
      }
    }
    Variants spectral = new Variants(bench, SPECTRAL, d.path);
    for (int bytes : sizes(bench)) {
      if (!bench.inBudget(SPECTRAL, d.path, Bench.bytes(bytes))) {
        break;
      }
      int n = bytes / 4;
      Spectral b = Spectral.alloc(d.device, n);
      measure(bench, d, clients, spectral, bytes, spectralSteps(b, n), what -> checkSpectral(d.device, b, what),
        () -> d.device.fill(b.r(), 0));
      for (BufferHandle h : b.all()) {
        await(d.device.free(h));
      }
    }
  }

  /** The clients the steps are sent through as requests. */
  private record Clients(DeviceClient device, BlasClient blas, KernelClient kernels, FftClient fft, RandClient rand) {
  }

  /** One sweep's three series: the steps as requests back to back, each awaited, and replayed. */
  private static final class Variants {
    final String sweep;
    final Series alone;
    final Series chained;
    final Series replayed;

    Variants(Bench bench, String sweep, String path) {
      this.sweep = sweep;
      alone = series(bench, sweep, path, STEPS + " requests");
      chained = series(bench, sweep, path, STEPS + " requests, each awaited");
      replayed = series(bench, sweep, path, "replay");
    }
  }

  /** Checks what a way of running the steps left; throws when it is wrong. */
  @FunctionalInterface
  private interface Check {
    void run(String what) throws Exception;
  }

  // One sweep's point: the steps as requests back to back, each awaited, and recorded and replayed.
  private void measure(Bench bench, DeployedDevice d, Clients clients, Variants variants, int bytes, List<Step> steps,
                       Check check, java.util.function.Supplier<Future<?>> reset) throws Exception {
    DeviceClient device = d.device;
    String sweep = variants.sweep;
    PipelineRecorder recorder = device.record();
    for (Step s : steps) {
      if (s.library() != null) {
        recorder.step(s.library(), s.body());
      } else {
        s.recordOwn().apply(recorder);
      }
    }
    PipelineHandle pipeline = await(recorder.build());
    bench.progress("%s %s %s: pipeline recorded, %s", sweep, d.path, Bench.bytes(bytes),
      pipeline.captured() ? "captured as a CUDA graph" : "replayed step by step");

    Plan plan = plan(bench);
    Histogram individual = Histograms.sequential(d.vertx, plan, i -> sendAll(clients, steps));
    check.run(STEPS + " requests");
    await(reset.get());
    Histogram oneByOne = Histograms.sequential(d.vertx, plan, i -> sendChained(clients, steps, 0));
    check.run(STEPS + " requests, each awaited");
    await(reset.get());
    Histogram replay = Histograms.sequential(d.vertx, plan, i -> device.replay(pipeline));
    check.run("replay");

    bench.latency(variants.alone, bytes, Bench.bytes(bytes), plan, individual, false);
    bench.latency(variants.chained, bytes, Bench.bytes(bytes), plan, oneByOne, false);
    JsonObject p = bench.latency(variants.replayed, bytes, Bench.bytes(bytes), plan, replay, false);
    double p50 = Histograms.p50(individual) / Histograms.p50(replay);
    double p99 = individual.getValueAtPercentile(99) / (double) replay.getValueAtPercentile(99);
    p.put("extra", new JsonObject().put("speedupP50", Series.round(p50)).put("speedupP99", Series.round(p99))
      .put("captured", pipeline.captured() ? 1 : 0).put("steps", STEPS)
      .put("speedupP50AgainstAwaited", Series.round(Histograms.p50(oneByOne) / Histograms.p50(replay))));
    bench.progress("%s %s %s: replay is %.2fx faster at p50, %.2fx at p99 (%s)", sweep, d.path, Bench.bytes(bytes),
      p50, p99, pipeline.captured() ? "CUDA graph" : "step by step");
    await(device.release(pipeline));
  }

  /** The ten steps as ten requests, sent back to back; done when all are answered. */
  private static Future<?> sendAll(Clients clients, List<Step> steps) {
    List<Future<?>> all = new ArrayList<>(steps.size());
    for (Step s : steps) {
      all.add(send(clients, s));
    }
    return Future.all(all);
  }

  /** The ten steps as ten requests, each sent when the one before it has been answered. */
  private static Future<?> sendChained(Clients clients, List<Step> steps, int from) {
    if (from == steps.size()) {
      return Future.succeededFuture();
    }
    return send(clients, steps.get(from)).compose(r -> sendChained(clients, steps, from + 1));
  }

  private static Future<?> send(Clients clients, Step s) {
    if (s.library() == null) {
      return s.sendOwn().apply(clients.device());
    }
    return switch (s.library()) {
      case BLAS -> clients.blas().execute((BlasRequest) s.body());
      case FFT -> clients.fft().execute((FftRequest) s.body());
      case RAND -> clients.rand().generate((RandRequest) s.body());
      default -> clients.kernels().execute((KernelRequest) s.body());
    };
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

  // r is out's round trip through the FFT: equal within F32 rounding, and out holds normals (not zeros).
  private static void checkSpectral(DeviceClient device, Spectral b, String what) throws Exception {
    float[] r = await(device.downloadFloats(b.r()));
    float[] out = await(device.downloadFloats(b.out()));
    double largest = 0;
    for (float v : out) {
      largest = Math.max(largest, Math.abs(v));
    }
    for (int i = 0; i < r.length; i++) {
      if (!(Math.abs(r[i] - out[i]) <= 1e-4 * Math.max(1, largest))) {
        throw new IllegalStateException(what + " left r[" + i + "] = " + r[i] + ", not out's " + out[i]);
      }
    }
    if (largest == 0) {
      throw new IllegalStateException(what + " left out all zeros");
    }
  }

  private static Series series(Bench bench, String sweep, String path, String variant) {
    return bench.record.series(sweep, path, variant, "latency", "us", "buffer", "B");
  }
}
