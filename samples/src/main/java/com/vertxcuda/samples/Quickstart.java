package com.vertxcuda.samples;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceScope;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.device.PollingTransport;
import com.vertxcuda.fft.FftClient;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.kernel.KernelClient;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.DeviceStats;
import com.vertxcuda.rand.RandClient;
import com.vertxcuda.rand.RngType;
import io.vertx.core.Vertx;
import java.util.Arrays;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;

/**
 * A pipeline over the event bus on device 0 (cuda where a GPU is usable, otherwise the host
 * backend): upload two matrices, multiply them (BLAS), transform the product's rows (FFT, R2C),
 * fill a buffer with uniforms (RAND), add it to the product (a built-in kernel), each downloaded and
 * checked against the CPU, then free everything (one {@link DeviceScope}). One line per step says
 * what ran where, how long it took and OK or FAILED; exits 0 only if every step is OK.
 *
 * <p>The argument picks the isolation: {@code auto} (default), {@code in_process} or {@code process}
 * ({@code mvn -pl samples exec:java -Dexec.args=process}). Logs are warnings only unless {@code --verbose}.
 */
@Command(name = "quickstart", mixinStandardHelpOptions = true,
  description = "Run a GEMM, FFT, RAND and kernel pipeline on device 0 and check every result.")
public final class Quickstart implements Callable<Integer> {

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Parameters(index = "0", arity = "0..1", description = "isolation: auto, in_process or process (default ${DEFAULT-VALUE})")
  Isolation isolation = Isolation.AUTO;

  @Option(names = "--n", description = "matrix size n (n × n F32; default ${DEFAULT-VALUE})")
  int n = 128;

  @Option(names = "--verbose", description = "keep every log line (Vert.x, the device, netlib)")
  boolean verbose;

  private static final int STEPS = 7;
  private int step;
  private String where = "device 0";

  public static void main(String[] args) {
    System.exit(new CommandLine(new Quickstart()).setCaseInsensitiveEnumValuesAllowed(true).execute(args));
  }

  @Override
  public Integer call() {
    if (n < 2 || n > 2048) {
      // The running command line's (its writers, its name under vertx-cuda), not a new one.
      throw new CommandLine.ParameterException(spec.commandLine(), "--n must be in 2..2048, not " + n);
    }
    DeviceOptions options = new DeviceOptions().setIsolation(isolation);
    if (!verbose) {
      QuietLogging.apply();
      options.setDeviceHostJvmOptions(QuietLogging.deviceHostJvmOptions());
    }
    long started = System.nanoTime();
    // Its event loops poll for a local device's answers instead of sleeping through short operations.
    Vertx vertx = Vertx.builder().withTransport(PollingTransport.create()).build();
    boolean ok;
    try {
      ok = pipeline(vertx, options);
    } finally {
      vertx.close().await();
    }
    System.out.printf("quickstart: %s in %.1f ms%n", ok ? "all " + STEPS + " steps OK" : "FAILED", (System.nanoTime() - started) / 1e6);
    return ok ? 0 : 1;
  }

  private boolean pipeline(Vertx vertx, DeviceOptions options) {
    DeviceInfo info = step("deploy", "DeviceVerticle with its library verticles", () -> {
      vertx.deployVerticle(new DeviceVerticle(options)).await();
      DeviceInfo d = DeviceClient.create(vertx).describe().await();
      where = d.getAddress() + " (" + d.getBackend() + ", " + d.getIsolation() + ")";
      return d;
    });
    if (info == null) {
      return false;
    }
    DeviceClient gpu = DeviceClient.create(vertx);
    BlasClient blas = BlasClient.create(vertx);
    FftClient fft = FftClient.create(vertx);
    RandClient rand = RandClient.create(vertx);
    KernelClient kernels = KernelClient.create(vertx);
    int nn = n * n;
    int bins = n / 2 + 1;
    Random random = new Random(42);
    float[] a = new float[nn];
    float[] b = new float[nn];
    for (int i = 0; i < nn; i++) {
      a[i] = random.nextFloat() - 0.5f;
      b[i] = random.nextFloat() - 0.5f;
    }
    DeviceScope scope = gpu.scope();
    boolean ok = false;
    try {
      BufferHandle[] ab = step("upload", "two " + n + "×" + n + " F32 matrices, read back", () -> {
        BufferHandle ha = gpu.upload(scope.alloc(DType.F32, nn).await(), a).await();
        BufferHandle hb = gpu.upload(scope.alloc(DType.F32, nn).await(), b).await();
        check(Arrays.equals(a, gpu.downloadFloats(ha).await()) && Arrays.equals(b, gpu.downloadFloats(hb).await()),
          "the matrices read back differ from those sent");
        return new BufferHandle[] {ha, hb};
      });
      if (ab == null) {
        return false;
      }
      float[][] product = new float[2][];
      BufferHandle c = step("gemm", "C = A·B, SGEMM " + n + "³ (BlasClient)", () -> {
        BufferHandle h = scope.alloc(DType.F32, nn).await();
        // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: swap the operands.
        blas.gemm(Transpose.N, Transpose.N, n, n, n, 1, ab[1], n, ab[0], n, 0, h, n).await();
        product[0] = gpu.downloadFloats(h).await();
        checkClose(product[0], multiply(a, b), 1e-4 * n, "C");
        return h;
      });
      if (c == null) {
        return false;
      }
      BufferHandle spectrum = step("fft", "R2C of C's " + n + " rows → " + n + "×" + bins + " C64 (FftClient)", () -> {
        BufferHandle h = scope.alloc(DType.C64, (long) n * bins).await();
        fft.transform(FftType.R2C, FftDirection.FORWARD, List.of(n), n, c, h).await();
        checkClose(gpu.downloadFloats(h).await(), dft(product[0]), 1e-4 * n, "the spectrum");
        return h;
      });
      if (spectrum == null) {
        return false;
      }
      BufferHandle r = step("rand", n * n + " uniforms, Philox4x32-10 (RandClient)", () -> {
        BufferHandle h = rand.uniform(RngType.PHILOX4_32_10, 42, scope.alloc(DType.F32, nn).await()).await();
        product[1] = gpu.downloadFloats(h).await();
        double sum = 0;
        for (float v : product[1]) {
          check(v > 0 && v <= 1, "a uniform out of (0, 1]: " + v);
          sum += v;
        }
        check(Math.abs(sum / nn - 0.5) < 0.01, "mean " + sum / nn + ", expected 0.5");
        return h;
      });
      if (r == null) {
        return false;
      }
      BufferHandle d = step("kernel", "D = C + R, built-in add (KernelClient)", () -> {
        BufferHandle h = kernels.add(c, r, scope.alloc(DType.F32, nn).await()).await();
        float[] expected = new float[nn];
        for (int i = 0; i < nn; i++) {
          expected[i] = product[0][i] + product[1][i];
        }
        checkClose(gpu.downloadFloats(h).await(), expected, 1e-6, "D");
        return h;
      });
      if (d == null) {
        return false;
      }
      ok = true;
    } finally {
      int held = scope.size();
      DeviceStats stats = step("free", "the scope's buffers", () -> {
        scope.close().await();
        DeviceStats s = gpu.stats().await();
        check(s.getBuffersAllocated() == 0, s.getBuffersAllocated() + " buffers still live");
        return s;
      });
      if (stats != null) {
        System.out.printf("        freed %d buffers; the device served %d requests%n", held, stats.getOperationsServed());
      }
      ok &= stats != null;
    }
    return ok;
  }

  private interface Work<T> {
    T run() throws Exception;
  }

  /** Runs one step and prints its line; null if it failed. */
  private <T> T step(String name, String what, Work<T> work) {
    step++;
    long t0 = System.nanoTime();
    T result;
    String outcome;
    try {
      result = work.run();
      outcome = "OK";
    } catch (Exception e) {
      result = null;
      outcome = "FAILED: " + e.getMessage();
    }
    System.out.printf("[%d/%d] %-6s %-48s on %s %8.1f ms  %s%n", step, STEPS, name, what, where,
      (System.nanoTime() - t0) / 1e6, outcome);
    return result;
  }

  private static void check(boolean ok, String why) {
    if (!ok) {
      throw new IllegalStateException(why);
    }
  }

  private static void checkClose(float[] got, double[] expected, double tolerance, String what) {
    check(got.length == expected.length, what + " has " + got.length + " values, expected " + expected.length);
    for (int i = 0; i < got.length; i++) {
      check(Math.abs(got[i] - expected[i]) <= tolerance * (1 + Math.abs(expected[i])),
        what + "[" + i + "] is " + got[i] + ", expected " + expected[i]);
    }
  }

  private static void checkClose(float[] got, float[] expected, double tolerance, String what) {
    double[] e = new double[expected.length];
    for (int i = 0; i < e.length; i++) {
      e[i] = expected[i];
    }
    checkClose(got, e, tolerance, what);
  }

  private double[] multiply(float[] a, float[] b) {
    double[] c = new double[n * n];
    for (int i = 0; i < n; i++) {
      for (int k = 0; k < n; k++) {
        double aik = a[i * n + k];
        for (int j = 0; j < n; j++) {
          c[i * n + j] += aik * b[k * n + j];
        }
      }
    }
    return c;
  }

  /** Each row's DFT, bins 0 .. n/2, as interleaved real, imaginary pairs (cuFFT's R2C layout). */
  private double[] dft(float[] x) {
    int bins = n / 2 + 1;
    double[] out = new double[2 * n * bins];
    for (int row = 0; row < n; row++) {
      for (int k = 0; k < bins; k++) {
        double re = 0;
        double im = 0;
        for (int t = 0; t < n; t++) {
          double angle = -2 * Math.PI * ((long) k * t % n) / n;
          re += x[row * n + t] * Math.cos(angle);
          im += x[row * n + t] * Math.sin(angle);
        }
        out[2 * (row * bins + k)] = re;
        out[2 * (row * bins + k) + 1] = im;
      }
    }
    return out;
  }
}
