package com.vertxcuda.bench;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.bench.result.Series;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftRequest;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.rand.RandRequest;
import com.vertxcuda.rand.RngType;
import io.vertx.core.Future;
import jcuda.driver.CUdeviceptr;
import jcuda.jcufft.JCufft;
import jcuda.jcufft.cufftHandle;
import jcuda.jcufft.cufftType;
import jcuda.jcurand.JCurand;
import jcuda.jcurand.curandGenerator;
import jcuda.jcurand.curandRngType;

import java.util.List;
import java.util.function.IntFunction;

import static com.vertxcuda.bench.Await.await;

/**
 * Sweeps {@code fft.c2c} and {@code rng.uniform}: one request at a time, answered when done, against
 * size — an in-place C2C forward FFT of 2^8 to 2^24 complex elements (one transform), and 2^10 to
 * 2^28 uniform F32 numbers from Philox (each request continuing where the last ended). Raw JCuda: a
 * cuFFT plan made once per size, and one cuRAND generator seeded once; a synchronize after each call.
 */
final class FftRngSection implements Section {

  private static final long SEED = 1234;

  @Override
  public String name() {
    return "fftrng";
  }

  @Override
  public void raw(Bench bench, RawJCuda raw) throws Exception {
    Series fft = fftSeries(bench, "raw-jcuda");
    for (int n : bench.sizes.fftLengths()) {
      if (!bench.inBudget(fft.sweep(), fft.path(), "n " + n)) {
        break;
      }
      CUdeviceptr signal = raw.alloc(8L * n);
      cufftHandle plan = new cufftHandle();
      JCufft.cufftPlanMany(plan, 1, new int[] {n}, null, 1, 0, null, 1, 0, cufftType.CUFFT_C2C, 1);
      JCufft.cufftSetStream(plan, raw.rtStream);
      point(bench, fft, n, n == largestFft(bench), i -> {
        JCufft.cufftExecC2C(plan, signal, signal, JCufft.CUFFT_FORWARD);
        raw.sync();
      });
      JCufft.cufftDestroy(plan);
      raw.free(signal);
    }
    Series rng = rngSeries(bench, "raw-jcuda");
    curandGenerator gen = new curandGenerator();
    JCurand.curandCreateGenerator(gen, curandRngType.CURAND_RNG_PSEUDO_PHILOX4_32_10);
    JCurand.curandSetStream(gen, raw.rtStream);
    JCurand.curandSetPseudoRandomGeneratorSeed(gen, SEED);
    try {
      for (long count : bench.sizes.rngCounts()) {
        if (!bench.inBudget(rng.sweep(), rng.path(), "count " + count)) {
          break;
        }
        CUdeviceptr numbers = raw.alloc(4L * count);
        point(bench, rng, count, count == largestRng(bench), i -> {
          JCurand.curandGenerateUniform(gen, numbers, count);
          raw.sync();
        });
        raw.free(numbers);
      }
    } finally {
      JCurand.curandDestroyGenerator(gen);
    }
  }

  /** The headline sizes (measured {@link Bench#REPEATS} times): the largest of each sweep. */
  private static int largestFft(Bench bench) {
    return bench.sizes.fftLengths().stream().mapToInt(Integer::intValue).max().orElse(0);
  }

  private static long largestRng(Bench bench) {
    return bench.sizes.rngCounts().stream().mapToLong(Long::longValue).max().orElse(0);
  }

  private static void point(Bench bench, Series s, long x, boolean headline, Histograms.Op op) throws Exception {
    Plan plan = bench.plan(Histograms.loop(new Plan(0, 3), op).getMinValue());
    bench.latency(s, x, String.valueOf(x), plan, Bench.measure(headline, () -> Histograms.loop(plan, op)), false);
  }

  @Override
  public void toolkit(Bench bench, DeployedDevice d) throws Exception {
    Series fft = fftSeries(bench, d.path);
    for (int n : bench.sizes.fftLengths()) {
      if (!bench.inBudget(fft.sweep(), fft.path(), "n " + n)) {
        break;
      }
      BufferHandle signal = await(d.device.alloc(DType.F32, 2L * n));
      await(d.device.fill(signal, 0.25));
      FftRequest c2c = new FftRequest().setType(FftType.C2C).setDirection(FftDirection.FORWARD).setN(List.of(n))
        .setBatch(1).setInput(signal).setOutput(signal);
      point(bench, d, fft, n, n == largestFft(bench), i -> d.fft.execute(c2c));
      await(d.device.free(signal));
    }
    Series rng = rngSeries(bench, d.path);
    for (long count : bench.sizes.rngCounts()) {
      if (!bench.inBudget(rng.sweep(), rng.path(), "count " + count)) {
        break;
      }
      BufferHandle numbers = await(d.device.alloc(DType.F32, count));
      // Successive numbers of one sequence, as the raw generator makes them.
      point(bench, d, rng, count, count == largestRng(bench), i -> d.rand.generate(new RandRequest().setGenerator(RngType.PHILOX4_32_10)
        .setSeed(SEED).setOffset(i * count).setOutput(numbers)));
      await(d.device.free(numbers));
    }
  }

  private static void point(Bench bench, DeployedDevice d, Series s, long x, boolean headline,
                            IntFunction<Future<?>> request) throws Exception {
    // The probe's requests are the sequence's first: the timed ones continue it, repeat after repeat.
    Plan probe = new Plan(0, 3);
    Plan plan = bench.plan(Histograms.sequential(d.vertx, probe, request).getMinValue());
    int[] from = {probe.total()};
    bench.latency(s, x, String.valueOf(x), plan, Bench.measure(headline, () -> {
      int first = from[0];
      from[0] += plan.total();
      return Histograms.sequential(d.vertx, plan, i -> request.apply(first + i));
    }), false);
  }

  private static Series fftSeries(Bench bench, String path) {
    return bench.record.series("fft.c2c", path, "C2C forward, in place", "time", "us", "complex elements", "");
  }

  private static Series rngSeries(Bench bench, String path) {
    return bench.record.series("rng.uniform", path, "Philox, F32", "time", "us", "numbers", "");
  }
}
