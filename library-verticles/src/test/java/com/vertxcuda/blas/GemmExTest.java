package com.vertxcuda.blas;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.Library;
import com.vertxcuda.PipelineHandle;
import org.junit.jupiter.api.Test;

import java.util.List;

/**
 * GEMM_EX, GEMM_STRIDED_BATCHED_EX and GEMM_BATCHED_EX (members anywhere: views of several buffers)
 * over each pair of data types and compute type cuBLAS offers (F16 and BF16 inputs with a half or
 * F32 output, F32, F64, C64, C128, TF32 compute), against a double reference on the values the
 * inputs hold; a GEMM_BATCHED_EX recorded in a pipeline and replayed; and the combinations and
 * layouts refused, each named.
 */
class GemmExTest extends BlasTypesFixture {

  private record Combo(DType in, DType out, BlasComputeType compute, double tolerance) { }

  private static final List<Combo> COMBOS = List.of(
    new Combo(DType.F16, DType.F16, BlasComputeType.F16, 2e-2),
    new Combo(DType.F16, DType.F16, BlasComputeType.F32, 1e-2),
    new Combo(DType.F16, DType.F32, BlasComputeType.DEFAULT, 1e-5),
    new Combo(DType.BF16, DType.BF16, BlasComputeType.F32, 2e-2),
    new Combo(DType.BF16, DType.F32, BlasComputeType.F32, 1e-5),
    new Combo(DType.F32, DType.F32, BlasComputeType.F32, 1e-5),
    new Combo(DType.F32, DType.F32, BlasComputeType.F32_FAST_TF32, 1e-2),
    new Combo(DType.F64, DType.F64, BlasComputeType.DEFAULT, 1e-12),
    new Combo(DType.C64, DType.C64, BlasComputeType.F32, 1e-5),
    new Combo(DType.C64, DType.C64, BlasComputeType.F32_FAST_TF32, 1e-2),
    new Combo(DType.C128, DType.C128, BlasComputeType.F64, 1e-12));

  private static final int M = 4;
  private static final int N = 3;
  private static final int K = 8;

  /** Pairs rounded to what {@code t} holds (F16 and BF16 too). */
  private static double[] held(DType t, double[] pairs) {
    if (t.size() != 2) {
      return fit(t, pairs);
    }
    double[] v = new double[pairs.length];
    for (int i = 0; i < v.length; i += 2) {
      v[i] = t.decode(t.round(pairs[i]));
    }
    return v;
  }

  private BufferHandle put(DType t, double[] pairs) {
    if (t.size() != 2) {
      return upload(t, pairs);
    }
    double[] re = new double[pairs.length / 2];
    for (int i = 0; i < re.length; i++) {
      re[i] = pairs[2 * i];
    }
    return encoded(t, re);
  }

  private double[] get(DType t, BufferHandle h) {
    if (t.size() != 2) {
      return download(t, h);
    }
    short[] bits = await(device.downloadShorts(h));
    double[] pairs = new double[2 * bits.length];
    for (int i = 0; i < bits.length; i++) {
      pairs[2 * i] = t.decode(bits[i] & 0xFFFF);
    }
    return pairs;
  }

  private static Transpose conjugateOr(DType t) {
    return t.isComplex() ? Transpose.C : Transpose.T;
  }

  /** alpha op(A) op(B) + beta C for A stored K x M (op T or C) and B stored K x N... as the tests lay them out. */
  private static double[] reference(Combo c, double[] a, double[] b, double[] cIn, double ai, double bi) {
    double[] opA = op(a, K, M, conjugateOr(c.in()));
    return axpby(1.25, ai, times(opA, b, M, K, N), -0.5, bi, cIn);
  }

  @Test
  void gemmExStridedAndPointerArrayBatchesOnEveryTypeCombination() {
    for (Combo c : COMBOS) {
      DType in = c.in();
      DType out = c.out();
      String what = in + " -> " + out + " " + c.compute();
      double ai = out.isComplex() ? 0.5 : 0;
      double bi = out.isComplex() ? -0.25 : 0;
      Transpose ta = conjugateOr(in);
      int batch = 3;
      double[][] as = new double[batch][];
      double[][] bs = new double[batch][];
      double[][] cs = new double[batch][];
      for (int i = 0; i < batch; i++) {
        as[i] = held(in, random(in, K * M, 10 + i));
        bs[i] = held(in, random(in, K * N, 20 + i));
        cs[i] = held(out, random(out, M * N, 30 + i));
      }

      // GEMM_EX: member 0.
      BufferHandle hc = put(out, cs[0]);
      await(blas.execute(new BlasRequest(BlasOp.GEMM_EX).setTransA(ta).setM(M).setN(N).setK(K).setAlpha(1.25)
        .setAlphaImag(ai).setA(put(in, as[0])).setLda(K).setB(put(in, bs[0])).setLdb(K).setBeta(-0.5).setBetaImag(bi)
        .setC(hc).setLdc(M).setComputeType(c.compute())));
      assertClose(reference(c, as[0], bs[0], cs[0], ai, bi), get(out, hc), c.tolerance(), "gemmEx " + what);

      // GEMM_STRIDED_BATCHED_EX: the members one stride apart (a gap of one element after each A).
      long sa = K * M + 1;
      double[] stridedA = new double[(int) (2 * sa * batch)];
      double[] stridedB = new double[2 * K * N * batch];
      double[] stridedC = new double[2 * M * N * batch];
      for (int i = 0; i < batch; i++) {
        System.arraycopy(as[i], 0, stridedA, (int) (2 * sa * i), 2 * K * M);
        System.arraycopy(bs[i], 0, stridedB, 2 * K * N * i, 2 * K * N);
        System.arraycopy(cs[i], 0, stridedC, 2 * M * N * i, 2 * M * N);
      }
      BufferHandle sc = put(out, stridedC);
      if (out.isComplex()) {
        await(blas.execute(new BlasRequest(BlasOp.GEMM_STRIDED_BATCHED_EX).setTransA(ta).setM(M).setN(N).setK(K)
          .setAlpha(1.25).setAlphaImag(ai).setA(put(in, stridedA)).setLda(K).setStrideA(sa).setB(put(in, stridedB))
          .setLdb(K).setStrideB(K * N).setBeta(-0.5).setBetaImag(bi).setC(sc).setLdc(M).setStrideC(M * N)
          .setBatchCount(batch).setComputeType(c.compute())));
      } else {
        await(blas.gemmStridedBatchedEx(ta, Transpose.N, M, N, K, 1.25, put(in, stridedA), K, sa, put(in, stridedB), K,
          K * N, -0.5, sc, M, M * N, batch, c.compute()));
      }
      double[] gotStrided = get(out, sc);
      for (int i = 0; i < batch; i++) {
        assertClose(reference(c, as[i], bs[i], cs[i], ai, bi),
          java.util.Arrays.copyOfRange(gotStrided, 2 * M * N * i, 2 * M * N * (i + 1)), c.tolerance(),
          "strided batched " + what + " member " + i);
      }

      // GEMM_BATCHED_EX: A's in two buffers (one holding two at offsets), C's as views of one buffer, out of order.
      BufferHandle twoAs = put(in, concat(as[0], as[2]));
      List<BufferHandle> batchA = List.of(twoAs.view(0, K * M), put(in, as[1]), twoAs.view(K * M, K * M));
      List<BufferHandle> batchB = List.of(put(in, bs[0]), put(in, bs[1]), put(in, bs[2]));
      BufferHandle allCs = put(out, concat(cs[2], concat(cs[0], cs[1])));
      List<BufferHandle> batchC = List.of(allCs.view(M * N, M * N), allCs.view(2 * M * N, M * N),
        allCs.view(0, M * N));
      if (out.isComplex()) {
        await(blas.execute(new BlasRequest(BlasOp.GEMM_BATCHED_EX).setTransA(ta).setM(M).setN(N).setK(K)
          .setAlpha(1.25).setAlphaImag(ai).setBatchA(batchA).setLda(K).setBatchB(batchB).setLdb(K).setBeta(-0.5)
          .setBetaImag(bi).setBatchC(batchC).setLdc(M).setBatchCount(batch).setComputeType(c.compute())));
      } else {
        await(blas.gemmBatchedEx(ta, Transpose.N, M, N, K, 1.25, batchA, K, batchB, K, -0.5, batchC, M, c.compute()));
      }
      double[] gotBatched = get(out, allCs);
      int[] at = {1, 2, 0};
      for (int i = 0; i < batch; i++) {
        assertClose(reference(c, as[i], bs[i], cs[i], ai, bi),
          java.util.Arrays.copyOfRange(gotBatched, 2 * M * N * at[i], 2 * M * N * (at[i] + 1)), c.tolerance(),
          "pointer-array batched " + what + " member " + i);
      }
    }
  }

  private static double[] concat(double[] a, double[] b) {
    double[] c = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }

  /** A GEMM_BATCHED_EX recorded in a pipeline: each replay computes it again from what the buffers then hold. */
  @Test
  void aRecordedPointerArrayBatchReplays() {
    DType t = DType.F32;
    double[] a0 = random(t, 4, 1);
    double[] a1 = random(t, 4, 2);
    double[] b = random(t, 4, 3);
    BufferHandle ha = upload(t, concat(a0, a1));
    BufferHandle hb = upload(t, b);
    BufferHandle hc = upload(t, new double[16]);
    BlasRequest step = new BlasRequest(BlasOp.GEMM_BATCHED_EX).setM(2).setN(2).setK(2).setBatchA(
      List.of(ha.view(0, 4), ha.view(4, 4))).setLda(2).setBatchB(List.of(hb, hb)).setLdb(2)
      .setBatchC(List.of(hc.view(4, 4), hc.view(0, 4))).setLdc(2).setBatchCount(2).setBeta(1);
    PipelineHandle p = await(device.record().step(Library.BLAS, step).build());
    for (int replay = 1; replay <= 2; replay++) {
      await(device.replay(p));
      double[] expected = concat(axpby(replay, 0, times(a1, b, 2, 2, 2), 0, 0, null),
        axpby(replay, 0, times(a0, b, 2, 2, 2), 0, 0, null));
      assertHolds(t, expected, hc, "replay " + replay);
    }
  }

  @Test
  void refusalsNameTheProblem() {
    BufferHandle h = encoded(DType.F16, new double[16]);
    BufferHandle s = upload(DType.F32, new double[64]);
    BufferHandle d = upload(DType.F64, new double[64]);
    BlasRequest ex = new BlasRequest(BlasOp.GEMM_EX).setM(2).setN(2).setK(2).setA(h).setLda(2).setB(h).setLdb(2)
      .setLdc(2);
    assertBadRequest(blas.execute(ex.setC(d)), "unsupported type combination: inputs F16, c F64");
    assertBadRequest(blas.execute(ex.setC(h.view(8, 4)).setComputeType(BlasComputeType.F32_FAST_TF32)),
      "unsupported type combination");
    assertBadRequest(blas.execute(ex.setA(s).setB(s).setC(s.view(16, 4)).setComputeType(BlasComputeType.F64)),
      "computeType F64");
    assertBadRequest(blas.execute(ex.setA(d).setB(d).setC(d.view(16, 4)).setComputeType(BlasComputeType.DEFAULT)
      .setTf32(true)), "tf32 applies to the F32 compute type only");
    assertBadRequest(blas.execute(ex.setTf32(false).setComputeType(null)), "computeType is missing");

    BlasRequest batched = new BlasRequest(BlasOp.GEMM_BATCHED_EX).setM(2).setN(2).setK(2).setLda(2).setLdb(2)
      .setLdc(2).setBatchCount(2).setBatchA(List.of(s.view(0, 4), s.view(4, 4))).setBatchB(List.of(s.view(8, 4),
        s.view(8, 4)));
    assertBadRequest(blas.execute(batched.setBatchC(List.of(s.view(16, 4), s.view(18, 4)))),
      "batchC[1] overlaps batchC[0]");
    assertBadRequest(blas.execute(batched.setBatchC(List.of(s.view(2, 4), s.view(20, 4)))),
      "batchC[0] overlaps batchA[0]");
    assertBadRequest(blas.execute(batched.setBatchC(List.of(s.view(16, 4), d.view(0, 4)))),
      "batchC[1] has dtype F64 but batchC[0] is F32");
    assertBadRequest(blas.execute(batched.setBatchC(List.of(s.view(16, 4)))), "batchC has 1 handles but batchCount is 2");
    assertBadRequest(blas.execute(batched.setBatchC(List.of(s.view(16, 4), s.view(20, 4))).setBatchB(null)),
      "batchB is missing");
    assertBadRequest(blas.execute(batched.setBatchB(List.of(s.view(8, 4), d.view(0, 4)))),
      "batchB[1] has dtype F64 but batchA[0] is F32");
    assertBadRequest(blas.execute(batched.setBatchB(List.of(s.view(8, 4), s.view(8, 3)))), "batchB[1] holds 3");
    // Past a few operands the check sweeps each buffer once instead of comparing every pair: a
    // batch of four names the same pairs.
    BlasRequest four = new BlasRequest(BlasOp.GEMM_BATCHED_EX).setM(2).setN(2).setK(2).setLda(2).setLdb(2)
      .setLdc(2).setBatchCount(4).setBatchA(List.of(s.view(0, 4), s.view(4, 4), s.view(0, 4), s.view(4, 4)))
      .setBatchB(List.of(s.view(8, 4), s.view(8, 4), s.view(12, 4), s.view(12, 4)));
    assertBadRequest(blas.execute(four.setBatchC(List.of(s.view(16, 4), s.view(20, 4), s.view(22, 4), s.view(28, 4)))),
      "batchC[2] overlaps batchC[1]");
    assertBadRequest(blas.execute(four.setBatchC(List.of(s.view(16, 4), s.view(20, 4), s.view(28, 4), s.view(10, 4)))),
      "batchC[3] overlaps batchB[0]");
    assertBadRequest(blas.execute(four.setBatchC(List.of(s.view(24, 4), s.view(20, 4), s.view(28, 4), s.view(2, 12)))),
      "batchC[3] overlaps batchA[0]");
    assertBadRequest(blas.execute(batched.setBatchCount(0)), "batchCount must be >= 1");
    assertBadRequest(blas.gemmBatchedEx(Transpose.N, Transpose.N, 2, 2, 2, 1, null, 2, List.of(s), 2, 0,
      List.of(s.view(16, 4)), 2, BlasComputeType.DEFAULT), "batchA is missing");
    assertHolds(DType.F32, new double[64], s, "s after refusals");
  }
}
