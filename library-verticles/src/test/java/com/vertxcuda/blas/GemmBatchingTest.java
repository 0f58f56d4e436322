package com.vertxcuda.blas;

import com.vertxcuda.device.TestDevices;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.library.HostDeviceTest;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Same-shaped GEMMs sent together run batched, and each result equals the unbatched one bit for bit. */
class GemmBatchingTest extends HostDeviceTest {

  static final int N = 16;

  @Override
  protected DeviceOptions options() {
    return TestDevices.options().setLibraryOptions(new JsonObject()
      .put("blas", new BlasOptions().setBatchWindow(20_000).setMaxBatchSize(8).toJson()));
  }

  private BlasRequest gemm(BufferHandle a, BufferHandle b, BufferHandle c, double beta) {
    return new BlasRequest(BlasOp.GEMM).setM(N).setN(N).setK(N).setAlpha(0.75).setA(a).setLda(N).setB(b).setLdb(N)
      .setBeta(beta).setC(c).setLdc(N);
  }

  @Test
  void batchedResultsEqualUnbatchedOnes() {
    int count = 12;
    List<BufferHandle> as = new ArrayList<>();
    List<BufferHandle> bs = new ArrayList<>();
    List<BufferHandle> cs = new ArrayList<>();
    List<BufferHandle> refs = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      as.add(f32(floats(values(N * N, 100 + i))));
      bs.add(f32(floats(values(N * N, 200 + i))));
      cs.add(f32(floats(values(N * N, 300 + i))));
      refs.add(f32(floats(values(N * N, 300 + i))));
    }
    List<Future<BlasReply>> batched = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      batched.add(blas.execute(gemm(as.get(i), bs.get(i), cs.get(i), 0.5)));
    }
    await(Future.all(batched));
    int largest = batched.stream().mapToInt(f -> f.result().getBatchSize()).max().orElse(0);
    assertTrue(largest > 1, "some requests ran batched, largest batch " + largest);
    assertTrue(largest <= 8, "no batch exceeds maxBatchSize, largest " + largest);
    for (int i = 0; i < count; i++) {
      // A strided-batched call of one is never held for batching: the unbatched reference.
      BlasReply alone = await(blas.execute(gemm(as.get(i), bs.get(i), refs.get(i), 0.5)
        .setOp(BlasOp.GEMM_STRIDED_BATCHED).setBatchCount(1)));
      assertEquals(1, alone.getBatchSize());
      float[] expected = readF32(refs.get(i));
      float[] got = readF32(cs.get(i));
      if (TestDevices.backend() == com.vertxcuda.device.BackendKind.HOST) {
        assertArrayEquals(expected, got, "request " + i);
      } else {
        // cuBLAS's batched kernels sum in another order than its single-GEMM ones: results differed
        // by up to 3e-8 on the H200 (inputs of order 1, k = 16). Allow 1e-6.
        for (int e = 0; e < expected.length; e++) {
          assertEquals(expected[e], got[e], 1e-6, "request " + i + " element " + e);
        }
      }
    }
  }

  @Test
  void requestsThatShareAnOutputAreNotBatchedTogether() {
    BufferHandle a = f32(floats(values(N * N, 1)));
    BufferHandle b = f32(floats(values(N * N, 2)));
    double[] c0 = widen(floats(values(N * N, 3)));
    BufferHandle c = f32(floats(c0));
    // C = AB + C twice: the second must see the first's result.
    Future<BlasReply> first = blas.execute(gemm(a, b, c, 1).setAlpha(1));
    Future<BlasReply> second = blas.execute(gemm(a, b, c, 1).setAlpha(1));
    await(Future.all(first, second));
    double[] ab = BlasVerticleTest.gemmReference(Transpose.N, Transpose.N, N, N, N, 1,
      widen(floats(values(N * N, 1))), N, widen(floats(values(N * N, 2))), N, 0, new double[N * N], N);
    double[] expected = new double[N * N];
    for (int i = 0; i < expected.length; i++) {
      expected[i] = c0[i] + 2 * ab[i];
    }
    assertClose(expected, widen(readF32(c)), 1e-5, "C + 2AB");
  }

  @Test
  void otherRequestsFlushTheHeldBatchInOrder() {
    BufferHandle a = f32(floats(values(N * N, 4)));
    BufferHandle b = f32(floats(values(N * N, 5)));
    BufferHandle c = f32(new float[N * N]);
    Future<BlasReply> product = blas.execute(gemm(a, b, c, 0));
    // Sent right behind the held GEMM: it must run after it and read its output.
    Future<Double> norm = blas.nrm2(N * N, c, 1);
    double[] ab = BlasVerticleTest.gemmReference(Transpose.N, Transpose.N, N, N, N, 0.75,
      widen(floats(values(N * N, 4))), N, widen(floats(values(N * N, 5))), N, 0, new double[N * N], N);
    double expected = 0;
    for (double v : ab) {
      expected += v * v;
    }
    await(product);
    assertEquals(Math.sqrt(expected), await(norm), 1e-4);
  }
}
