package com.vertxcuda.blas;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import org.junit.jupiter.api.Test;

/**
 * SYMM, HEMM, SYRK, HERK, SYR2K, HER2K, TRMM and TRSM on F32, F64, C64 and C128 (the Hermitian ones
 * on C64 and C128), every side, triangle, transpose and diagonal cuBLAS takes, padded leading
 * dimensions and complex scalars, against references computed here from the logical matrices; and
 * the requests they refuse, each named.
 */
class BlasLevel3Test extends BlasTypesFixture {

  private static char part(FillMode uplo) {
    return uplo == FillMode.UPPER ? 'U' : 'L';
  }

  @Test
  void symmAndHemmOnEverySideAndTriangle() {
    int m = 4;
    int n = 3;
    for (DType t : ALL) {
      for (BlasOp routine : new BlasOp[] {BlasOp.SYMM, BlasOp.HEMM}) {
        boolean herm = routine == BlasOp.HEMM;
        if (herm && !t.isComplex()) {
          continue;
        }
        for (Side side : Side.values()) {
          for (FillMode uplo : FillMode.values()) {
            int order = side == Side.LEFT ? m : n;
            int lda = order + 1;
            int ldb = m + 2;
            int ldc = m + 1;
            double[] a = symmetric(t, order, order, herm, 1);
            double[] b = general(t, m, n, 2);
            double[] c = general(t, m, n, 3);
            double ai = t.isComplex() ? -0.5 : 0;
            double bi = t.isComplex() ? 0.25 : 0;
            BufferHandle ha = upload(t, storeFull(a, order, order, lda, part(uplo)));
            BufferHandle hb = upload(t, storeFull(b, m, n, ldb, 'A'));
            BufferHandle hc = upload(t, storeFull(c, m, n, ldc, 'A'));
            if (t.isComplex()) {
              await(blas.execute(new BlasRequest(routine).setSide(side).setUplo(uplo).setM(m).setN(n).setAlpha(1.5)
                .setAlphaImag(ai).setA(ha).setLda(lda).setB(hb).setLdb(ldb).setBeta(-0.75).setBetaImag(bi).setC(hc)
                .setLdc(ldc)));
            } else {
              await(blas.symm(side, uplo, m, n, 1.5, ha, lda, hb, ldb, -0.75, hc, ldc));
            }
            double[] p = side == Side.LEFT ? times(a, b, m, m, n) : times(b, a, m, n, n);
            assertHolds(t, storeFull(axpby(1.5, ai, p, -0.75, bi, c), m, n, ldc, 'A'), hc,
              routine + " " + side + " " + uplo);
          }
        }
      }
    }
  }

  @Test
  void rankKUpdatesOnEveryTriangleAndTranspose() {
    int n = 4;
    int k = 3;
    for (DType t : ALL) {
      for (BlasOp routine : new BlasOp[] {BlasOp.SYRK, BlasOp.HERK, BlasOp.SYR2K, BlasOp.HER2K}) {
        boolean herm = routine == BlasOp.HERK || routine == BlasOp.HER2K;
        boolean two = routine == BlasOp.SYR2K || routine == BlasOp.HER2K;
        if (herm && !t.isComplex()) {
          continue;
        }
        Transpose back = herm ? Transpose.C : Transpose.T;
        for (FillMode uplo : FillMode.values()) {
          for (Transpose trans : new Transpose[] {Transpose.N, back}) {
            int rows = trans == Transpose.N ? n : k;
            int cols = trans == Transpose.N ? k : n;
            int lda = rows + 1;
            int ldb = rows + 2;
            int ldc = n + 2;
            double[] a = general(t, rows, cols, 4);
            double[] b = general(t, rows, cols, 5);
            double[] c = herm ? symmetric(t, n, n, true, 6) : general(t, n, n, 6);
            // HERK takes a real alpha; HERK and HER2K a real beta.
            double ai = t.isComplex() && routine != BlasOp.HERK ? 0.75 : 0;
            double bi = t.isComplex() && !herm ? 0.5 : 0;
            BufferHandle hc = upload(t, storeFull(c, n, n, ldc, 'A'));
            BlasRequest r = new BlasRequest(routine).setUplo(uplo).setTransA(trans).setN(n).setK(k).setAlpha(0.5)
              .setAlphaImag(ai).setA(upload(t, storeFull(a, rows, cols, lda, 'A'))).setLda(lda).setBeta(-1.25)
              .setBetaImag(bi).setC(hc).setLdc(ldc);
            if (two) {
              r.setB(upload(t, storeFull(b, rows, cols, ldb, 'A'))).setLdb(ldb);
            }
            if (routine == BlasOp.HERK) {
              await(blas.herk(uplo, trans, n, k, 0.5, r.getA(), lda, -1.25, hc, ldc));
            } else if (routine == BlasOp.SYR2K && !t.isComplex()) {
              await(blas.syr2k(uplo, trans, n, k, 0.5, r.getA(), lda, r.getB(), ldb, -1.25, hc, ldc));
            } else {
              await(blas.execute(r));
            }
            double[] opA = op(a, rows, cols, trans);
            double[] opB = op(b, rows, cols, trans);
            double[] p;
            if (two) {
              // alpha A B' + alpha'' B A', alpha'' = conj(alpha) for HER2K.
              p = axpby(0.5, ai, times(opA, op(opB, n, k, back), n, k, n), 0.5, herm ? -ai : ai,
                times(opB, op(opA, n, k, back), n, k, n));
              p = axpby(1, 0, p, -1.25, bi, c);
            } else {
              p = axpby(0.5, ai, times(opA, op(opA, n, k, back), n, k, n), -1.25, bi, c);
            }
            // Only the uplo triangle of C changes.
            double[] expected = storeFull(c, n, n, ldc, 'A');
            double[] triangle = storeFull(p, n, n, ldc, part(uplo));
            for (int i = 0; i < expected.length; i++) {
              expected[i] = triangle[i] == GARBAGE ? expected[i] : triangle[i];
            }
            assertHolds(t, expected, hc, routine + " " + uplo + " " + trans);
          }
        }
      }
    }
  }

  @Test
  void trmmAndTrsmOnEverySideTriangleTransposeAndDiagonal() {
    int m = 4;
    int n = 3;
    for (DType t : ALL) {
      Transpose[] transposes = t.isComplex() ? Transpose.values() : new Transpose[] {Transpose.N, Transpose.T};
      double ai = t.isComplex() ? 0.5 : 0;
      for (Side side : Side.values()) {
        for (FillMode uplo : FillMode.values()) {
          for (Transpose trans : transposes) {
            for (Diagonal diag : Diagonal.values()) {
              String what = side + " " + uplo + " " + trans + " " + diag;
              int order = side == Side.LEFT ? m : n;
              int lda = order + 1;
              int ldb = m + 1;
              int ldc = m + 2;
              boolean unit = diag == Diagonal.UNIT;
              double[] tri = triangular(t, order, order, uplo == FillMode.UPPER, unit, 7);
              double[] stored = storeFull(tri, order, order, lda, part(uplo));
              if (unit) { // a unit diagonal is never read
                for (int i = 0; i < order; i++) {
                  stored[2 * (i + i * lda)] = GARBAGE;
                }
              }
              BufferHandle ha = upload(t, stored);
              double[] b = general(t, m, n, 8);
              double[] opT = op(tri, order, order, trans);

              BufferHandle hb = upload(t, storeFull(b, m, n, ldb, 'A'));
              BufferHandle hc = upload(t, storeFull(general(t, m, n, 9), m, n, ldc, 'A'));
              if (t.isComplex()) {
                await(blas.execute(new BlasRequest(BlasOp.TRMM).setSide(side).setUplo(uplo).setTransA(trans)
                  .setDiag(diag).setM(m).setN(n).setAlpha(1.5).setAlphaImag(ai).setA(ha).setLda(lda).setB(hb)
                  .setLdb(ldb).setC(hc).setLdc(ldc)));
              } else {
                await(blas.trmm(side, uplo, trans, diag, m, n, 1.5, ha, lda, hb, ldb, hc, ldc));
              }
              double[] product = side == Side.LEFT ? times(opT, b, m, m, n) : times(b, opT, m, n, n);
              assertHolds(t, storeFull(axpby(1.5, ai, product, 0, 0, null), m, n, ldc, 'A'), hc, "trmm " + what);
              assertHolds(t, storeFull(b, m, n, ldb, 'A'), hb, "trmm leaves b " + what);

              await(blas.execute(new BlasRequest(BlasOp.TRSM).setSide(side).setUplo(uplo).setTransA(trans)
                .setDiag(diag).setM(m).setN(n).setAlpha(1.5).setAlphaImag(ai).setA(ha).setLda(lda).setB(hb)
                .setLdb(ldb)));
              double[] solved = download(t, hb);
              double[] x = loadFull(solved, m, n, ldb);
              assertClose(fit(t, storeFull(x, m, n, ldb, 'A')), solved, 0, "trsm padding " + what);
              double[] residual = side == Side.LEFT ? times(opT, x, m, m, n) : times(x, opT, m, n, n);
              assertClose(axpby(1.5, ai, b, 0, 0, null), residual, 50 * tolerance(t), "trsm " + what);
            }
          }
        }
      }
    }
  }

  @Test
  void trmmInPlaceWritesOverB() {
    for (DType t : ALL) {
      int m = 3;
      int n = 2;
      double[] tri = triangular(t, m, m, true, false, 10);
      double[] b = general(t, m, n, 11);
      BufferHandle hb = upload(t, storeFull(b, m, n, m, 'A'));
      await(blas.execute(new BlasRequest(BlasOp.TRMM).setSide(Side.LEFT).setUplo(FillMode.UPPER)
        .setTransA(Transpose.N).setM(m).setN(n).setAlpha(2).setA(upload(t, storeFull(tri, m, m, m, 'U'))).setLda(m)
        .setB(hb).setLdb(m).setC(hb).setLdc(m)));
      assertHolds(t, axpby(2, 0, times(tri, b, m, m, n), 0, 0, null), hb, "in-place trmm");
    }
  }

  @Test
  void refusalsNameTheProblem() {
    BufferHandle s = upload(DType.F32, general(DType.F32, 4, 4, 1));
    BufferHandle s2 = upload(DType.F32, general(DType.F32, 4, 4, 2));
    BufferHandle z = upload(DType.C64, general(DType.C64, 4, 4, 3));
    BufferHandle z2 = upload(DType.C64, general(DType.C64, 4, 4, 4));
    BufferHandle zc = upload(DType.C64, general(DType.C64, 4, 4, 5));
    assertBadRequest(blas.symm(null, FillMode.UPPER, 2, 2, 1, s, 2, s2, 2, 0, upload(DType.F32, new double[8]), 2),
      "side is missing");
    assertBadRequest(blas.symm(Side.LEFT, null, 2, 2, 1, s, 2, s2, 2, 0, upload(DType.F32, new double[8]), 2),
      "uplo is missing");
    assertBadRequest(blas.symm(Side.LEFT, FillMode.UPPER, 3, 2, 1, s, 2, s2, 3, 0, upload(DType.F32, new double[12]),
      3), "lda");
    assertBadRequest(blas.herk(FillMode.UPPER, Transpose.N, 2, 2, 1, s, 2, 0, s2, 2), "a has dtype F32");
    assertBadRequest(blas.herk(FillMode.UPPER, Transpose.T, 2, 2, 1, z, 2, 0, zc, 2), "transA T");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.HERK).setN(2).setK(2).setA(z).setLda(2).setC(zc).setLdc(2)
      .setAlphaImag(1)), "alphaImag");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.HER2K).setN(2).setK(2).setA(z).setLda(2).setB(z2).setLdb(2)
      .setC(zc).setLdc(2).setBetaImag(1)), "betaImag");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.SYRK).setTransA(Transpose.C).setN(2).setK(2).setA(z)
      .setLda(2).setC(zc).setLdc(2)), "transA C");
    assertBadRequest(blas.syr2k(FillMode.LOWER, Transpose.N, 2, 2, 1, s, 2, z, 2, 0, s2, 2), "b has dtype C64");
    assertBadRequest(blas.syrk(FillMode.LOWER, Transpose.N, 2, 2, 1, s, 2, 0, s.view(2, 4), 2), "c overlaps a");
    assertBadRequest(blas.trmm(Side.LEFT, FillMode.UPPER, Transpose.N, null, 2, 2, 1, s, 2, s2, 2, s, 2),
      "diag is missing");
    assertBadRequest(blas.trmm(Side.LEFT, FillMode.UPPER, Transpose.N, Diagonal.UNIT, 2, 2, 1, s, 2, s2, 2,
      s2.view(1, 4), 2), "c overlaps b");
    assertBadRequest(blas.trmm(Side.LEFT, FillMode.UPPER, Transpose.N, Diagonal.UNIT, 2, 2, 1, s, 2, s2, 2, s2, 3),
      "c overlaps b");
    assertBadRequest(blas.trmm(Side.LEFT, FillMode.UPPER, Transpose.C, Diagonal.UNIT, 2, 2, 1, s, 2, s2, 2,
      upload(DType.F32, new double[8]), 2), "transA C");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.TRSM).setSide(Side.RIGHT).setUplo(null).setM(2).setN(2)
      .setA(z).setLda(2).setB(zc).setLdb(2)), "uplo is missing");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.HEMM).setM(2).setN(2).setA(s).setLda(2).setB(s2).setLdb(2)
      .setC(upload(DType.F32, new double[8])).setLdc(2)), "a has dtype F32");
    // Nothing was written by the refusals.
    assertHolds(DType.C64, general(DType.C64, 4, 4, 5), zc, "c after refusals");
  }
}
