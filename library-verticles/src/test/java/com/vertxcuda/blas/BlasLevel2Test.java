package com.vertxcuda.blas;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import org.junit.jupiter.api.Test;

/**
 * Every level-2 routine on the dtypes cuBLAS has it for: GEMV and GBMV (every transpose), SYMV,
 * HEMV, SBMV, HBMV, SPMV, HPMV (both triangles), TRMV, TBMV, TPMV, TRSV, TBSV, TPSV (every triangle,
 * transpose and diagonal), GER, GERC, SYR, HER, SYR2, HER2, SPR, HPR, SPR2, HPR2, with strided vectors
 * and complex scalars, each matrix stored full, banded or packed around elements that must stay
 * untouched; against references computed here from the logical matrices. And the refusals.
 */
class BlasLevel2Test extends BlasTypesFixture {

  private static char part(boolean upper) {
    return upper ? 'U' : 'L';
  }

  private static Transpose[] transposes(DType t) {
    return t.isComplex() ? Transpose.values() : new Transpose[] {Transpose.N, Transpose.T};
  }

  @Test
  void generalMatrixVectorProducts() {
    int m = 5;
    int n = 4;
    int kl = 1;
    int ku = 2;
    for (DType t : ALL) {
      double ai = t.isComplex() ? 0.5 : 0;
      double bi = t.isComplex() ? -0.25 : 0;
      for (BlasOp routine : new BlasOp[] {BlasOp.GEMV, BlasOp.GBMV}) {
        for (Transpose trans : transposes(t)) {
          boolean band = routine == BlasOp.GBMV;
          double[] a = general(t, m, n, 1);
          if (band) {
            for (int j = 0; j < n; j++) {
              for (int i = 0; i < m; i++) {
                if (i - j > kl || j - i > ku) {
                  a[2 * (i + j * m)] = 0;
                  a[2 * (i + j * m) + 1] = 0;
                }
              }
            }
          }
          int lda = band ? kl + ku + 2 : m + 1;
          double[] stored = band ? storeGeneralBand(a, m, n, kl, ku, lda) : storeFull(a, m, n, lda, 'A');
          int xl = trans == Transpose.N ? n : m;
          int yl = trans == Transpose.N ? m : n;
          double[] x = general(t, xl, 1, 2);
          double[] y = general(t, yl, 1, 3);
          BufferHandle hy = upload(t, storeVector(y, 3));
          await(blas.execute(new BlasRequest(routine).setTransA(trans).setM(m).setN(n).setKl(kl).setKu(ku)
            .setAlpha(1.5).setAlphaImag(ai).setA(upload(t, stored)).setLda(lda).setX(upload(t, storeVector(x, 2)))
            .setIncx(2).setBeta(-0.5).setBetaImag(bi).setY(hy).setIncy(3)));
          double[] expected = axpby(1.5, ai, times(op(a, m, n, trans), x, yl, xl, 1), -0.5, bi, y);
          assertHolds(t, storeVector(expected, 3), hy, routine + " " + trans);
        }
      }
    }
  }

  @Test
  void symmetricAndHermitianMatrixVectorProducts() {
    int n = 4;
    int k = 1;
    for (DType t : ALL) {
      double ai = t.isComplex() ? 0.5 : 0;
      double bi = t.isComplex() ? -0.25 : 0;
      for (BlasOp routine : new BlasOp[] {BlasOp.SYMV, BlasOp.HEMV, BlasOp.SBMV, BlasOp.HBMV, BlasOp.SPMV,
        BlasOp.HPMV}) {
        boolean herm = routine == BlasOp.HEMV || routine == BlasOp.HBMV || routine == BlasOp.HPMV;
        boolean band = routine == BlasOp.SBMV || routine == BlasOp.HBMV;
        boolean packed = routine == BlasOp.SPMV || routine == BlasOp.HPMV;
        if (herm != t.isComplex() && (herm || band || packed)) {
          continue; // Hermitian ones are complex only; cuBLAS's SBMV and SPMV real only
        }
        for (boolean upper : new boolean[] {true, false}) {
          double[] a = symmetric(t, n, band ? k : n, herm, 4);
          int lda = band ? k + 2 : n + 1;
          double[] stored = band ? storeBand(a, n, k, lda, upper) : packed ? storePacked(a, n, upper)
            : storeFull(a, n, n, lda, part(upper));
          if (routine == BlasOp.HEMV) { // a Hermitian diagonal's imaginary parts are never read
            for (int i = 0; i < n; i++) {
              stored[2 * (i + i * lda) + 1] = GARBAGE;
            }
          }
          double[] x = general(t, n, 1, 5);
          double[] y = general(t, n, 1, 6);
          BufferHandle hy = upload(t, storeVector(y, 2));
          await(blas.execute(new BlasRequest(routine).setUplo(upper ? FillMode.UPPER : FillMode.LOWER).setN(n)
            .setK(k).setAlpha(0.75).setAlphaImag(ai).setA(upload(t, stored)).setLda(lda)
            .setX(upload(t, storeVector(x, 3))).setIncx(3).setBeta(1.25).setBetaImag(bi).setY(hy).setIncy(2)));
          assertHolds(t, storeVector(axpby(0.75, ai, times(a, x, n, n, 1), 1.25, bi, y), 2), hy,
            routine + " upper " + upper);
        }
      }
    }
  }

  @Test
  void triangularProductsAndSolves() {
    int n = 4;
    int k = 2;
    for (DType t : ALL) {
      for (BlasOp routine : new BlasOp[] {BlasOp.TRMV, BlasOp.TBMV, BlasOp.TPMV, BlasOp.TRSV, BlasOp.TBSV,
        BlasOp.TPSV}) {
        boolean band = routine == BlasOp.TBMV || routine == BlasOp.TBSV;
        boolean packed = routine == BlasOp.TPMV || routine == BlasOp.TPSV;
        boolean solve = routine == BlasOp.TRSV || routine == BlasOp.TBSV || routine == BlasOp.TPSV;
        for (boolean upper : new boolean[] {true, false}) {
          for (Transpose trans : transposes(t)) {
            for (Diagonal diag : Diagonal.values()) {
              String what = routine + " upper " + upper + " " + trans + " " + diag;
              boolean unit = diag == Diagonal.UNIT;
              double[] tri = triangular(t, n, band ? k : n, upper, unit, 7);
              int lda = band ? k + 1 : n + 1;
              double[] stored = band ? storeBand(tri, n, k, lda, upper) : packed ? storePacked(tri, n, upper)
                : storeFull(tri, n, n, lda, part(upper));
              if (unit && !packed) { // a unit diagonal is never read
                for (int i = 0; i < n; i++) {
                  stored[2 * ((band ? upper ? k : 0 : i) + i * lda)] = GARBAGE;
                }
              }
              double[] x = general(t, n, 1, 8);
              BufferHandle hx = upload(t, storeVector(x, 2));
              await(blas.execute(new BlasRequest(routine).setUplo(upper ? FillMode.UPPER : FillMode.LOWER)
                .setTransA(trans).setDiag(diag).setN(n).setK(k).setA(upload(t, stored)).setLda(lda).setX(hx)
                .setIncx(2)));
              double[] opT = op(tri, n, n, trans);
              if (!solve) {
                assertHolds(t, storeVector(times(opT, x, n, n, 1), 2), hx, what);
                continue;
              }
              double[] got = download(t, hx);
              double[] solved = new double[2 * n];
              for (int i = 0; i < n; i++) {
                solved[2 * i] = got[4 * i];
                solved[2 * i + 1] = got[4 * i + 1];
              }
              assertClose(fit(t, storeVector(solved, 2)), got, 0, what + " padding");
              assertClose(x, times(opT, solved, n, n, 1), 50 * tolerance(t), what);
            }
          }
        }
      }
    }
  }

  @Test
  void rankUpdates() {
    int m = 4;
    int n = 3;
    for (DType t : ALL) {
      double ai = t.isComplex() ? 0.5 : 0;
      for (BlasOp routine : new BlasOp[] {BlasOp.GER, BlasOp.GERC, BlasOp.SYR, BlasOp.HER, BlasOp.SYR2, BlasOp.HER2,
        BlasOp.SPR, BlasOp.HPR, BlasOp.SPR2, BlasOp.HPR2}) {
        boolean herm = routine == BlasOp.HER || routine == BlasOp.HER2 || routine == BlasOp.HPR
          || routine == BlasOp.HPR2;
        boolean packed = routine == BlasOp.SPR || routine == BlasOp.HPR || routine == BlasOp.SPR2
          || routine == BlasOp.HPR2;
        boolean two = routine == BlasOp.SYR2 || routine == BlasOp.HER2 || routine == BlasOp.SPR2
          || routine == BlasOp.HPR2;
        boolean conj = herm || routine == BlasOp.GERC;
        if ((herm || routine == BlasOp.GERC) != t.isComplex() && (herm || routine == BlasOp.GERC || packed)) {
          continue; // Hermitian ones and GERC complex only; cuBLAS's SPR and SPR2 real only
        }
        // HER and HPR take a real alpha.
        double alphaImag = routine == BlasOp.HER || routine == BlasOp.HPR ? 0 : ai;
        if (routine == BlasOp.GER || routine == BlasOp.GERC) {
          double[] a = general(t, m, n, 9);
          double[] x = general(t, m, 1, 10);
          double[] y = general(t, n, 1, 11);
          BufferHandle ha = upload(t, storeFull(a, m, n, m + 1, 'A'));
          await(blas.execute(new BlasRequest(routine).setM(m).setN(n).setAlpha(-1.5).setAlphaImag(alphaImag)
            .setX(upload(t, storeVector(x, 2))).setIncx(2).setY(upload(t, storeVector(y, 3))).setIncy(3).setA(ha)
            .setLda(m + 1)));
          double[] outer = times(x, op(y, n, 1, conj ? Transpose.C : Transpose.T), m, 1, n);
          assertHolds(t, storeFull(axpby(-1.5, alphaImag, outer, 1, 0, a), m, n, m + 1, 'A'), ha, routine.name());
          continue;
        }
        for (boolean upper : new boolean[] {true, false}) {
          double[] a = symmetric(t, m, m, herm, 12);
          double[] x = general(t, m, 1, 13);
          double[] y = general(t, m, 1, 14);
          Transpose back = conj ? Transpose.C : Transpose.T;
          double[] update = axpby(-1.5, alphaImag, times(x, op(two ? y : x, m, 1, back), m, 1, m), 0, 0, null);
          if (two) { // + alpha'' y x', alpha'' = conj(alpha) for HER2 and HPR2
            update = axpby(1, 0, update, 1, 0, axpby(-1.5, herm ? -alphaImag : alphaImag,
              times(y, op(x, m, 1, back), m, 1, m), 0, 0, null));
          }
          double[] expected = axpby(1, 0, a, 1, 0, update);
          int lda = m + 2;
          double[] stored = packed ? storePacked(a, m, upper) : storeFull(a, m, m, lda, part(upper));
          if (herm && !packed) { // a Hermitian diagonal's imaginary parts are taken as, and set to, zero
            for (int i = 0; i < m; i++) {
              stored[2 * (i + i * lda) + 1] = GARBAGE;
            }
          }
          BufferHandle ha = upload(t, stored);
          BlasRequest r = new BlasRequest(routine).setUplo(upper ? FillMode.UPPER : FillMode.LOWER).setN(m)
            .setAlpha(-1.5).setAlphaImag(alphaImag).setX(upload(t, storeVector(x, 2))).setIncx(2).setA(ha)
            .setLda(lda);
          if (two) {
            r.setY(upload(t, storeVector(y, 3))).setIncy(3);
          }
          await(blas.execute(r));
          assertHolds(t, packed ? storePacked(expected, m, upper) : storeFull(expected, m, m, lda, part(upper)), ha,
            routine + " upper " + upper);
        }
      }
    }
  }

  @Test
  void refusalsNameTheProblem() {
    BufferHandle s = upload(DType.F32, general(DType.F32, 16, 1, 1));
    BufferHandle s2 = upload(DType.F32, general(DType.F32, 16, 1, 2));
    BufferHandle z = upload(DType.C64, general(DType.C64, 16, 1, 3));
    BufferHandle z2 = upload(DType.C64, general(DType.C64, 16, 1, 4));
    BlasRequest gbmv = new BlasRequest(BlasOp.GBMV).setM(3).setN(3).setKl(1).setKu(1).setA(s).setLda(2).setX(s2)
      .setY(s2.view(4, 3));
    assertBadRequest(blas.execute(gbmv), "lda must be >= max(1, 3)");
    assertBadRequest(blas.execute(gbmv.setLda(3).setKl(-1)), "kl must be >= 0");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.SBMV).setN(2).setK(1).setA(z).setLda(2).setX(z2)
      .setY(z2.view(4, 2))), "a has dtype C64");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.HEMV).setN(2).setA(s).setLda(2).setX(s2)
      .setY(s2.view(4, 2))), "a has dtype F32");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.SPMV).setN(6).setA(s.view(0, 20 - 4)).setX(s2)
      .setY(s2.view(8, 6))), "a holds 16");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.TRSV).setN(2).setDiag(null).setA(s).setLda(2).setX(s2)),
      "diag is missing");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.TBMV).setN(2).setK(1).setA(s).setLda(2).setX(s.view(3, 2))),
      "x overlaps a");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.TRMV).setTransA(null).setN(2).setA(s).setLda(2).setX(s2)),
      "transA is missing");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.SYR).setUplo(null).setN(2).setX(s2).setA(s).setLda(2)),
      "uplo is missing");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.HER).setN(2).setAlphaImag(1).setX(z2).setA(z).setLda(2)),
      "alphaImag must be 0");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.GERC).setM(2).setN(2).setX(s).setY(s2).setA(s2.view(8, 4))
      .setLda(2)), "x has dtype F32");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.SPR2).setN(4).setX(s2).setY(s2.view(12, 3)).setA(s)),
      "y holds 3");
    assertHolds(DType.F32, general(DType.F32, 16, 1, 1), s, "a after refusals");
  }
}
