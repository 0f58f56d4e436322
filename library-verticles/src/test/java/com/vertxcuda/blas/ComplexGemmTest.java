package com.vertxcuda.blas;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.library.HostDeviceTest;
import org.junit.jupiter.api.Test;

/**
 * Complex GEMM (C64 through cublasCgemm, C128 through cublasZgemm; on the host backend in double
 * precision) against a reference computed here: every pair of N, T and C (conjugate transpose),
 * padded leading dimensions, complex alpha and beta, strided batches; and the refusals that keep
 * complex-only arguments off real GEMMs. Elements are (real, imaginary) pairs.
 */
class ComplexGemmTest extends HostDeviceTest {

  /** C = alpha op(A) op(B) + beta C on interleaved complex arrays, leading dimensions in elements. */
  static double[] reference(Transpose ta, Transpose tb, int m, int n, int k, double ar, double ai, double[] a, int lda,
                            double[] b, int ldb, double br, double bi, double[] c, int ldc) {
    double[] out = c.clone();
    for (int j = 0; j < n; j++) {
      for (int i = 0; i < m; i++) {
        double sr = 0;
        double si = 0;
        for (int p = 0; p < k; p++) {
          int x = ta == Transpose.N ? i + p * lda : p + i * lda;
          int y = tb == Transpose.N ? p + j * ldb : j + p * ldb;
          double xr = a[2 * x];
          double xi = ta == Transpose.C ? -a[2 * x + 1] : a[2 * x + 1];
          double yr = b[2 * y];
          double yi = tb == Transpose.C ? -b[2 * y + 1] : b[2 * y + 1];
          sr += xr * yr - xi * yi;
          si += xr * yi + xi * yr;
        }
        int at = i + j * ldc;
        double cr = c[2 * at];
        double ci = c[2 * at + 1];
        out[2 * at] = ar * sr - ai * si + br * cr - bi * ci;
        out[2 * at + 1] = ar * si + ai * sr + br * ci + bi * cr;
      }
    }
    return out;
  }

  private BufferHandle c64(double[] pairs) {
    BufferHandle h = await(device.alloc(DType.C64, pairs.length / 2));
    return await(device.upload(h, floats(pairs)));
  }

  private BufferHandle c128(double[] pairs) {
    BufferHandle h = await(device.alloc(DType.C128, pairs.length / 2));
    return await(device.upload(h, pairs));
  }

  @Test
  void c64AndC128EveryTransposeWithComplexScalars() {
    int m = 5;
    int n = 4;
    int k = 3;
    for (DType dtype : new DType[] {DType.C64, DType.C128}) {
      for (Transpose ta : Transpose.values()) {
        for (Transpose tb : Transpose.values()) {
          int lda = (ta == Transpose.N ? m : k) + 2;
          int ldb = (tb == Transpose.N ? k : n) + 1;
          int ldc = m + 3;
          double[] a = values(2 * lda * (ta == Transpose.N ? k : m), 11);
          double[] b = values(2 * ldb * (tb == Transpose.N ? n : k), 12);
          double[] c = values(2 * ldc * n, 13);
          boolean single = dtype == DType.C64;
          if (single) { // the reference starts from what the device holds
            a = widen(floats(a));
            b = widen(floats(b));
            c = widen(floats(c));
          }
          BufferHandle ha = single ? c64(a) : c128(a);
          BufferHandle hb = single ? c64(b) : c128(b);
          BufferHandle hc = single ? c64(c) : c128(c);
          await(blas.execute(new BlasRequest(BlasOp.GEMM).setTransA(ta).setTransB(tb).setM(m).setN(n).setK(k)
            .setAlpha(1.5).setAlphaImag(-0.25).setA(ha).setLda(lda).setB(hb).setLdb(ldb)
            .setBeta(-0.5).setBetaImag(0.75).setC(hc).setLdc(ldc)));
          double[] expected = reference(ta, tb, m, n, k, 1.5, -0.25, a, lda, b, ldb, -0.5, 0.75, c, ldc);
          double[] got = single ? widen(await(device.downloadFloats(hc))) : await(device.downloadDoubles(hc));
          assertClose(expected, got, single ? 1e-5 : 1e-12, dtype + " gemm " + ta + tb);
        }
      }
    }
  }

  @Test
  void c128StridedBatchedAndThePlainClientsRealScalars() {
    int m = 3;
    int n = 2;
    int k = 4;
    int batch = 3;
    long sa = m * k + 1;
    long sb = k * n;
    long sc = m * n + 2;
    double[] a = values((int) (2 * sa * batch), 14);
    double[] b = values((int) (2 * sb * batch), 15);
    double[] c = values((int) (2 * sc * batch), 16);
    BufferHandle hc = c128(c);
    await(blas.gemmStridedBatched(Transpose.C, Transpose.N, m, n, k, 2, c128(a), k, sa, c128(b), k, sb, 1, hc, m, sc,
      batch));
    double[] expected = c.clone();
    for (int i = 0; i < batch; i++) {
      double[] ai = java.util.Arrays.copyOfRange(a, (int) (2 * i * sa), (int) (2 * (i * sa + m * k)));
      double[] bi = java.util.Arrays.copyOfRange(b, (int) (2 * i * sb), (int) (2 * (i * sb + k * n)));
      double[] ci = java.util.Arrays.copyOfRange(c, (int) (2 * i * sc), (int) (2 * (i * sc + m * n)));
      System.arraycopy(reference(Transpose.C, Transpose.N, m, n, k, 2, 0, ai, k, bi, k, 1, 0, ci, m), 0, expected,
        (int) (2 * i * sc), 2 * m * n);
    }
    assertClose(expected, await(device.downloadDoubles(hc)), 1e-12, "strided batched C128 gemm");
  }

  @Test
  void complexOnlyArgumentsAreRefusedOnRealGemmsAndMixedDtypesNamed() {
    BufferHandle a = f32(floats(values(4, 1)));
    BufferHandle b = f32(floats(values(4, 2)));
    BufferHandle c = f32(new float[4]);
    assertBadRequest(blas.gemm(Transpose.C, Transpose.N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2), "transA");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.GEMM).setM(2).setN(2).setK(2).setA(a).setLda(2).setB(b)
      .setLdb(2).setC(c).setLdc(2).setAlphaImag(1)), "alphaImag");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.GEMV).setTransA(Transpose.C).setM(2).setN(2).setA(a).setLda(2)
      .setX(f32(1, 1)).setY(f32(0, 0))), "transA");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.AXPY).setN(4).setAlpha(1).setBetaImag(0.5).setX(a)
      .setY(b)), "betaImag");
    BufferHandle z = c64(values(8, 3));
    assertBadRequest(blas.gemm(Transpose.N, Transpose.N, 2, 2, 2, 1, z, 2, b, 2, 0, c64(new double[8]), 2), "b");
    // Nothing was written by the refusals.
    assertClose(new double[4], widen(readF32(c)), 0, "c after refusals");
  }
}
