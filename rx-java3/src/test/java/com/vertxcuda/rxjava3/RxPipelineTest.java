package com.vertxcuda.rxjava3;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.device.TestDevices;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.rand.RngType;
import com.vertxcuda.rxjava3.blas.BlasClient;
import com.vertxcuda.rxjava3.fft.FftClient;
import com.vertxcuda.rxjava3.kernel.KernelClient;
import com.vertxcuda.rxjava3.rand.RandClient;
import io.reactivex.rxjava3.core.Single;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import io.vertx.rxjava3.core.Vertx;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The quickstart's pipeline (upload, GEMM, FFT, RAND, a built-in kernel, free) as RxJava 3 chains
 * of the generated clients, against a device on the host backend; a failure surfaces as the
 * {@link CudaException} the device answered, with its code.
 */
@ExtendWith(VertxExtension.class)
class RxPipelineTest {

  private static final int N = 8;
  private static final int NN = N * N;
  private static final int BINS = N / 2 + 1;

  private Vertx vertx;

  @BeforeEach
  void deploy(io.vertx.core.Vertx core, VertxTestContext ctx) {
    vertx = Vertx.newInstance(core);
    TestDevices.deploy(core, TestDevices.options()).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void quickstartPipelineAsSingleAndCompletableChains(VertxTestContext ctx) {
    DeviceClient gpu = DeviceClient.create(vertx);
    BlasClient blas = BlasClient.create(vertx);
    FftClient fft = FftClient.create(vertx);
    RandClient rand = RandClient.create(vertx);
    KernelClient kernels = KernelClient.create(vertx);
    DeviceScope scope = gpu.scope();
    Random random = new Random(42);
    float[] a = new float[NN];
    float[] b = new float[NN];
    for (int i = 0; i < NN; i++) {
      a[i] = random.nextFloat() - 0.5f;
      b[i] = random.nextFloat() - 0.5f;
    }
    float[][] product = new float[2][];

    Single<BufferHandle> ha = scope.rxAlloc(DType.F32, NN).flatMap(h -> gpu.rxUpload(h, a));
    Single<BufferHandle> hb = scope.rxAlloc(DType.F32, NN).flatMap(h -> gpu.rxUpload(h, b));
    Single.zip(ha, hb, (x, y) -> new BufferHandle[] {x, y})
      // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: swap the operands.
      .flatMap(ab -> scope.rxAlloc(DType.F32, NN)
        .flatMap(c -> blas.rxGemm(Transpose.N, Transpose.N, N, N, N, 1, ab[1], N, ab[0], N, 0, c, N)))
      .flatMap(c -> gpu.rxDownloadFloats(c).map(got -> {
        product[0] = got;
        assertClose(multiply(a, b), got, 1e-4, "C");
        return c;
      }))
      .flatMap(c -> scope.rxAlloc(DType.C64, (long) N * BINS)
        .flatMap(s -> fft.rxTransform(FftType.R2C, FftDirection.FORWARD, List.of(N), N, c, s)
          .flatMap(done -> gpu.rxDownloadFloats(s)))
        .map(spectrum -> {
          assertClose(dft(product[0]), spectrum, 1e-4, "the spectrum");
          return c;
        }))
      .flatMap(c -> scope.rxAlloc(DType.F32, NN)
        .flatMap(r -> rand.rxUniform(RngType.PHILOX4_32_10, 42, r))
        .flatMap(r -> gpu.rxDownloadFloats(r).map(uniforms -> {
          for (float v : uniforms) {
            assertTrue(v > 0 && v <= 1, "a uniform out of (0, 1]: " + v);
          }
          product[1] = uniforms;
          return new BufferHandle[] {c, r};
        })))
      .flatMap(cr -> scope.rxAlloc(DType.F32, NN).flatMap(d -> kernels.rxAdd(cr[0], cr[1], d)))
      .flatMap(gpu::rxDownloadFloats)
      .flatMapCompletable(d -> {
        double[] expected = new double[NN];
        for (int i = 0; i < NN; i++) {
          expected[i] = product[0][i] + product[1][i];
        }
        assertClose(expected, d, 1e-6, "D");
        assertEquals(6, scope.size(), "the scope holds every buffer of the pipeline");
        return scope.rxClose();
      })
      .andThen(gpu.rxStats())
      .subscribe(stats -> ctx.verify(() -> {
        assertEquals(0, stats.getBuffersAllocated(), "the scope freed everything");
        ctx.completeNow();
      }), ctx::failNow);
  }

  @Test
  void failuresSurfaceAsCudaExceptionsWithTheirCode(VertxTestContext ctx) {
    DeviceClient gpu = DeviceClient.create(vertx);
    gpu.rxAlloc(DType.F32, 4)
      .flatMapCompletable(h -> gpu.rxFree(h).andThen(gpu.rxDownload(h)).ignoreElement())
      .subscribe(() -> ctx.failNow("a freed buffer was read"), freed -> ctx.verify(() -> {
        assertInstanceOf(CudaException.class, freed);
        assertEquals(FailureCode.NOT_FOUND, ((CudaException) freed).code());
        gpu.rxAlloc(DType.F32, -1).subscribe(h -> ctx.failNow("a negative count was allocated"),
          refused -> ctx.verify(() -> {
            assertInstanceOf(CudaException.class, refused);
            assertEquals(FailureCode.BAD_REQUEST, ((CudaException) refused).code());
            ctx.completeNow();
          }));
      }));
  }

  /**
   * A scope's allocation whose subscription is disposed before the answer: the device still
   * allocates (a sent request is not taken back), and the scope's close frees it all the same.
   */
  @Test
  void aDisposedScopeAllocationIsFreedWhenTheScopeCloses(VertxTestContext ctx) {
    DeviceClient gpu = DeviceClient.create(vertx);
    DeviceScope scope = gpu.scope();
    scope.rxAlloc(DType.F32, 1024).subscribe(h -> { }, t -> { }).dispose();
    scope.rxAlloc(DType.F32, 16)
      .flatMap(kept -> gpu.rxStats().map(stats -> {
        assertEquals(2, stats.getBuffersAllocated(), "the disposed allocation was made anyway");
        return kept;
      }))
      .flatMap(kept -> scope.rxClose().andThen(gpu.rxStats()))
      .subscribe(stats -> ctx.verify(() -> {
        assertEquals(0, stats.getBuffersAllocated(), "the scope's close freed the disposed allocation too");
        ctx.completeNow();
      }), ctx::failNow);
  }

  private static void assertClose(double[] expected, float[] got, double tolerance, String what) {
    assertEquals(expected.length, got.length, what + ": length");
    double[] widened = new double[got.length];
    for (int i = 0; i < got.length; i++) {
      widened[i] = got[i];
    }
    assertArrayEquals(expected, widened, tolerance * N, what);
  }

  private static double[] multiply(float[] a, float[] b) {
    double[] c = new double[NN];
    for (int i = 0; i < N; i++) {
      for (int k = 0; k < N; k++) {
        for (int j = 0; j < N; j++) {
          c[i * N + j] += (double) a[i * N + k] * b[k * N + j];
        }
      }
    }
    return c;
  }

  /** Each row's DFT, bins 0 .. n/2, as interleaved real, imaginary pairs (cuFFT's R2C layout). */
  private static double[] dft(float[] x) {
    double[] out = new double[2 * N * BINS];
    for (int row = 0; row < N; row++) {
      for (int k = 0; k < BINS; k++) {
        for (int t = 0; t < N; t++) {
          double angle = -2 * Math.PI * ((long) k * t % N) / N;
          out[2 * (row * BINS + k)] += x[row * N + t] * Math.cos(angle);
          out[2 * (row * BINS + k) + 1] += x[row * N + t] * Math.sin(angle);
        }
      }
    }
    return out;
  }
}
