package com.vertxcuda.blas;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.library.HostDeviceTest;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Each BLAS routine on the host backend against a reference computed here (F32 to 1e-5, F64 to 1e-12). */
class BlasVerticleTest extends HostDeviceTest {

  static double[] gemmReference(Transpose ta, Transpose tb, int m, int n, int k, double alpha, double[] a, int lda,
                                double[] b, int ldb, double beta, double[] c, int ldc) {
    double[] out = c.clone();
    for (int j = 0; j < n; j++) {
      for (int i = 0; i < m; i++) {
        double sum = 0;
        for (int p = 0; p < k; p++) {
          double av = ta == Transpose.N ? a[i + p * lda] : a[p + i * lda];
          double bv = tb == Transpose.N ? b[p + j * ldb] : b[j + p * ldb];
          sum += av * bv;
        }
        out[i + j * ldc] = alpha * sum + beta * c[i + j * ldc];
      }
    }
    return out;
  }

  @Test
  void gemmF32EveryTransposeWithPaddedLeadingDimensions() {
    int m = 5;
    int n = 4;
    int k = 3;
    for (Transpose ta : new Transpose[] {Transpose.N, Transpose.T}) {
      for (Transpose tb : new Transpose[] {Transpose.N, Transpose.T}) {
        int lda = (ta == Transpose.N ? m : k) + 2;
        int ldb = (tb == Transpose.N ? k : n) + 1;
        int ldc = m + 3;
        double[] a = widen(floats(values(lda * (ta == Transpose.N ? k : m), 1)));
        double[] b = widen(floats(values(ldb * (tb == Transpose.N ? n : k), 2)));
        double[] c = widen(floats(values(ldc * n, 3)));
        BufferHandle ha = f32(floats(a));
        BufferHandle hb = f32(floats(b));
        BufferHandle hc = f32(floats(c));
        await(blas.gemm(ta, tb, m, n, k, 1.5, ha, lda, hb, ldb, -0.5, hc, ldc));
        double[] expected = gemmReference(ta, tb, m, n, k, 1.5, a, lda, b, ldb, -0.5, c, ldc);
        assertClose(expected, widen(readF32(hc)), 1e-5, "gemm " + ta + tb);
      }
    }
  }

  @Test
  void gemmF64OnViewsLeavesTheRestAlone() {
    int m = 3;
    int n = 2;
    int k = 4;
    double[] whole = values(40, 4);
    BufferHandle buffer = f64(whole);
    BufferHandle a = buffer.view(2, m * k);
    BufferHandle b = buffer.view(14, k * n);
    BufferHandle c = buffer.view(30, m * n);
    await(blas.gemm(Transpose.N, Transpose.N, m, n, k, 1, a, m, b, k, 0, c, m));
    double[] expected = whole.clone();
    double[] av = java.util.Arrays.copyOfRange(whole, 2, 14);
    double[] bv = java.util.Arrays.copyOfRange(whole, 14, 22);
    double[] cv = gemmReference(Transpose.N, Transpose.N, m, n, k, 1, av, m, bv, k, 0, new double[m * n], m);
    System.arraycopy(cv, 0, expected, 30, m * n);
    assertClose(expected, readF64(buffer), 1e-12, "gemm on views");
  }

  @Test
  void gemmStridedBatched() {
    int m = 4;
    int n = 3;
    int k = 2;
    int batch = 3;
    long sa = m * k + 1;
    long sb = k * n;
    long sc = m * n + 2;
    double[] a = values((int) (sa * batch), 5);
    double[] b = values((int) (sb * batch), 6);
    double[] c = values((int) (sc * batch), 7);
    BufferHandle hc = f64(c);
    await(blas.gemmStridedBatched(Transpose.N, Transpose.T, m, n, k, 2, f64(a), m, sa, f64(b), n, sb, 1, hc, m, sc,
      batch));
    double[] expected = c.clone();
    for (int i = 0; i < batch; i++) {
      double[] ai = java.util.Arrays.copyOfRange(a, (int) (i * sa), (int) (i * sa + m * k));
      double[] bi = java.util.Arrays.copyOfRange(b, (int) (i * sb), (int) (i * sb + k * n));
      double[] ci = java.util.Arrays.copyOfRange(c, (int) (i * sc), (int) (i * sc + m * n));
      System.arraycopy(gemmReference(Transpose.N, Transpose.T, m, n, k, 2, ai, m, bi, n, 1, ci, m), 0, expected,
        (int) (i * sc), m * n);
    }
    assertClose(expected, readF64(hc), 1e-12, "strided batched gemm");
  }

  @Test
  void gemmExWithHalfAndBfloat16Inputs() {
    int m = 4;
    int n = 4;
    int k = 8;
    for (DType input : new DType[] {DType.F16, DType.BF16}) {
      double[] a = values(m * k, 8);
      double[] b = values(k * n, 9);
      BufferHandle ha = encoded(input, a);
      BufferHandle hb = encoded(input, b);
      // The reference uses the values the device holds: rounded to the input type.
      for (int i = 0; i < a.length; i++) {
        a[i] = input.decode(input.encode(a[i]));
      }
      for (int i = 0; i < b.length; i++) {
        b[i] = input.decode(input.encode(b[i]));
      }
      BufferHandle hc = f32(new float[m * n]);
      await(blas.gemmEx(Transpose.T, Transpose.N, m, n, k, 1, ha, k, hb, k, 0, hc, m, false));
      double[] expected = gemmReference(Transpose.T, Transpose.N, m, n, k, 1, a, k, b, k, 0, new double[m * n], m);
      assertClose(expected, widen(readF32(hc)), 1e-5, "gemmEx " + input);
    }
  }

  @Test
  void tf32GemmIsCloseToFp32() {
    int m = 8;
    double[] a = widen(floats(values(m * m, 10)));
    double[] b = widen(floats(values(m * m, 11)));
    BufferHandle hc = f32(new float[m * m]);
    await(blas.execute(new BlasRequest(BlasOp.GEMM).setM(m).setN(m).setK(m).setA(f32(floats(a))).setLda(m)
      .setB(f32(floats(b))).setLdb(m).setC(hc).setLdc(m).setTf32(true)));
    double[] expected = gemmReference(Transpose.N, Transpose.N, m, m, m, 1, a, m, b, m, 0, new double[m * m], m);
    assertClose(expected, widen(readF32(hc)), 1e-2, "tf32 gemm");
  }

  /**
   * TF32 is a request's choice, not the device's state: an FP32 GEMM right after a TF32 one (the
   * handle keeps the math mode the last call set) is full precision, and the TF32 one really was not.
   */
  @Test
  void anFp32GemmAfterATf32OneIsFullPrecision() {
    int m = 64;
    double[] a = widen(floats(values(m * m, 14)));
    double[] b = widen(floats(values(m * m, 15)));
    BufferHandle ha = f32(floats(a));
    BufferHandle hb = f32(floats(b));
    BufferHandle tf32 = f32(new float[m * m]);
    BufferHandle fp32 = f32(new float[m * m]);
    java.util.function.BiFunction<BufferHandle, Boolean, BlasRequest> gemm = (c, tf) -> new BlasRequest(BlasOp.GEMM)
      .setM(m).setN(m).setK(m).setA(ha).setLda(m).setB(hb).setLdb(m).setC(c).setLdc(m).setTf32(tf);
    await(blas.execute(gemm.apply(tf32, true)));
    await(blas.execute(gemm.apply(fp32, false)));
    double[] expected = gemmReference(Transpose.N, Transpose.N, m, m, m, 1, a, m, b, m, 0, new double[m * m], m);
    assertClose(expected, widen(readF32(fp32)), 1e-5, "FP32 GEMM after a TF32 one");
    double[] rounded = widen(readF32(tf32));
    double worst = 0;
    for (int i = 0; i < rounded.length; i++) {
      worst = Math.max(worst, Math.abs(rounded[i] - expected[i]));
    }
    assertTrue(worst > 1e-4 && worst < 1e-1, "the TF32 GEMM's largest error " + worst);
  }

  @Test
  void levelOne() {
    double[] x = values(10, 12);
    double[] y = values(10, 13);
    BufferHandle hx = f64(x);
    BufferHandle hy = f64(y);
    // Strided: x at 0, 2, 4, 6, 8 and y at 0, 1, 2, 3, 4.
    double dot = 0;
    double norm = 0;
    double abs = 0;
    for (int i = 0; i < 5; i++) {
      dot += x[2 * i] * y[i];
      norm += x[2 * i] * x[2 * i];
      abs += Math.abs(x[2 * i]);
    }
    assertEquals(dot, await(blas.dot(5, hx, 2, hy, 1)), 1e-12, "dot");
    assertEquals(Math.sqrt(norm), await(blas.nrm2(5, hx, 2)), 1e-12, "nrm2");
    assertEquals(abs, await(blas.asum(5, hx, 2)), 1e-12, "asum");
    int max = 0;
    int min = 0;
    for (int i = 1; i < 10; i++) {
      max = Math.abs(x[i]) > Math.abs(x[max]) ? i : max;
      min = Math.abs(x[i]) < Math.abs(x[min]) ? i : min;
    }
    assertEquals(max + 1, await(blas.iamax(10, hx, 1)), "iamax is 1-based");
    assertEquals(min + 1, await(blas.iamin(10, hx, 1)), "iamin is 1-based");

    await(blas.axpy(5, 3, hx, 2, hy, 1));
    double[] expectedY = y.clone();
    for (int i = 0; i < 5; i++) {
      expectedY[i] += 3 * x[2 * i];
    }
    assertClose(expectedY, readF64(hy), 1e-12, "axpy");

    await(blas.scal(10, -2, hx, 1));
    double[] expectedX = x.clone();
    for (int i = 0; i < 10; i++) {
      expectedX[i] *= -2;
    }
    assertClose(expectedX, readF64(hx), 1e-12, "scal");

    BufferHandle z = f64(new double[10]);
    await(blas.copy(10, hx, 1, z, 1));
    assertClose(expectedX, readF64(z), 0, "copy");

    BufferHandle p = f32(1, 2, 3);
    BufferHandle q = f32(4, 5, 6);
    await(blas.swap(3, p, 1, q, 1));
    assertArrayEquals(new float[] {4, 5, 6}, readF32(p), "swap x");
    assertArrayEquals(new float[] {1, 2, 3}, readF32(q), "swap y");

    double c = Math.cos(0.3);
    double s = Math.sin(0.3);
    await(blas.rot(3, p, 1, q, 1, c, s));
    float[] rx = readF32(p);
    float[] ry = readF32(q);
    for (int i = 0; i < 3; i++) {
      assertEquals(c * (4 + i) + s * (1 + i), rx[i], 1e-5, "rot x");
      assertEquals(c * (1 + i) - s * (4 + i), ry[i], 1e-5, "rot y");
    }
  }

  @Test
  void levelTwo() {
    int m = 4;
    int n = 3;
    int lda = 5;
    double[] a = values(lda * n, 14);
    double[] x = values(Math.max(m, n), 15);
    double[] y = values(Math.max(m, n), 16);
    BufferHandle ha = f64(a);
    BufferHandle hx = f64(x);
    BufferHandle hy = f64(y);
    await(blas.gemv(Transpose.N, m, n, 2, ha, lda, hx, 1, 0.5, hy, 1));
    double[] expected = y.clone();
    for (int i = 0; i < m; i++) {
      double sum = 0;
      for (int j = 0; j < n; j++) {
        sum += a[i + j * lda] * x[j];
      }
      expected[i] = 2 * sum + 0.5 * y[i];
    }
    assertClose(expected, readF64(hy), 1e-12, "gemv N");

    BufferHandle ht = f64(new double[n]);
    await(blas.gemv(Transpose.T, m, n, 1, ha, lda, hx, 1, 0, ht, 1));
    double[] expectedT = new double[n];
    for (int j = 0; j < n; j++) {
      for (int i = 0; i < m; i++) {
        expectedT[j] += a[i + j * lda] * x[i];
      }
    }
    assertClose(expectedT, readF64(ht), 1e-12, "gemv T");

    await(blas.ger(m, n, -1, hx, 1, hy, 1, ha, lda));
    double[] yNow = expected;
    double[] expectedA = a.clone();
    for (int j = 0; j < n; j++) {
      for (int i = 0; i < m; i++) {
        expectedA[i + j * lda] -= x[i] * yNow[j];
      }
    }
    assertClose(expectedA, readF64(ha), 1e-12, "ger");
  }

  @Test
  void levelThree() {
    int m = 3;
    int n = 4;
    double[] a = values(n * m, 17);
    double[] b = values(m * n, 18);
    BufferHandle hc = f64(new double[m * n]);
    await(blas.geam(Transpose.T, Transpose.N, m, n, 2, f64(a), n, -1, f64(b), m, hc, m));
    double[] expected = new double[m * n];
    for (int j = 0; j < n; j++) {
      for (int i = 0; i < m; i++) {
        expected[i + j * m] = 2 * a[j + i * n] - b[i + j * m];
      }
    }
    assertClose(expected, readF64(hc), 1e-12, "geam");

    int k = 3;
    double[] s = values(n * k, 19);
    double[] c0 = values(n * n, 20);
    BufferHandle sc = f64(c0);
    await(blas.syrk(FillMode.UPPER, Transpose.N, n, k, 1, f64(s), n, 2, sc, n));
    double[] got = readF64(sc);
    for (int j = 0; j < n; j++) {
      for (int i = 0; i < n; i++) {
        double sum = 0;
        for (int p = 0; p < k; p++) {
          sum += s[i + p * n] * s[j + p * n];
        }
        double want = i <= j ? sum + 2 * c0[i + j * n] : c0[i + j * n];
        assertEquals(want, got[i + j * n], 1e-12, "syrk (" + i + "," + j + ")");
      }
    }

    // One-column matrices may have any leading dimension the checks accept: only the column is touched.
    BufferHandle one = f64(new double[] {0.5});
    await(blas.gemm(Transpose.N, Transpose.N, 1, 1, 1, 1, f64(new double[] {3}), Integer.MAX_VALUE,
      f64(new double[] {4}), Integer.MAX_VALUE, 2, one, Integer.MAX_VALUE));
    assertEquals(13, readF64(one)[0], 0, "1x1 gemm with leading dimensions 2^31 - 1");

    // k = 0: C = beta C on the triangle, the rest untouched (as cuBLAS).
    BufferHandle sc0 = f64(c0);
    await(blas.syrk(FillMode.LOWER, Transpose.N, n, 0, 1, f64(new double[n]), n, 3, sc0, n));
    double[] scaled = readF64(sc0);
    for (int j = 0; j < n; j++) {
      for (int i = 0; i < n; i++) {
        assertEquals(i >= j ? 3 * c0[i + j * n] : c0[i + j * n], scaled[i + j * n], 1e-12, "syrk k=0 (" + i + "," + j + ")");
      }
    }

    // Upper-triangular A with a strong diagonal; X solves A X = 3 B.
    double[] t = values(m * m, 21);
    for (int i = 0; i < m; i++) {
      t[i + i * m] = 4 + i;
      for (int j = 0; j < i; j++) {
        t[i + j * m] = 99;
      }
    }
    double[] rhs = values(m * n, 22);
    BufferHandle hb = f64(rhs);
    await(blas.trsm(Side.LEFT, FillMode.UPPER, Transpose.N, Diagonal.NON_UNIT, m, n, 3, f64(t), m, hb, m));
    double[] xs = readF64(hb);
    for (int j = 0; j < n; j++) {
      for (int i = 0; i < m; i++) {
        double sum = 0;
        for (int p = i; p < m; p++) {
          sum += t[i + p * m] * xs[p + j * m];
        }
        assertEquals(3 * rhs[i + j * m], sum, 1e-12, "trsm row " + i + " col " + j);
      }
    }
  }

  @Test
  void badRequestsNameTheField() {
    BufferHandle a = f32(new float[12]);
    BufferHandle b = f32(new float[12]);
    BufferHandle c = f32(new float[12]);
    BufferHandle d = f64(new double[12]);
    assertBadRequest(blas.gemm(Transpose.N, Transpose.N, 3, 3, 3, 1, a, 2, b, 3, 0, c, 3), "lda");
    assertBadRequest(blas.gemm(Transpose.N, Transpose.N, 4, 4, 4, 1, a, 4, b, 4, 0, c, 4), "a holds 12");
    assertBadRequest(blas.gemm(Transpose.N, Transpose.N, 3, 3, 3, 1, a, 3, d, 3, 0, c, 3), "b has dtype F64");
    assertBadRequest(blas.gemm(Transpose.N, Transpose.N, -1, 3, 3, 1, a, 3, b, 3, 0, c, 3), "m must be");
    assertBadRequest(blas.gemm(Transpose.N, Transpose.N, 3, 3, 3, 1, a, 3, b, 3, 0, null, 3), "c is missing");
    assertBadRequest(blas.gemm(Transpose.N, Transpose.N, 2, 2, 2, 1, a, 2, b, 2, 0, a.view(2, 4), 2), "c overlaps a");
    assertBadRequest(blas.gemmEx(Transpose.N, Transpose.N, 2, 2, 2, 1, encoded(DType.F16, 1, 2, 3, 4), 2,
      encoded(DType.F16, 1, 2, 3, 4), 2, 0, f64(0, 0, 0, 0), 2, false), "unsupported type combination");
    assertBadRequest(blas.gemmStridedBatched(Transpose.N, Transpose.N, 2, 2, 2, 1, a, 2, 4, b, 2, 4, 0, c, 2, 1, 2),
      "strideC");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.GEMM).setM(2).setN(2).setK(2).setA(d).setLda(2).setB(d)
      .setLdb(2).setC(f64(new double[4])).setLdc(2).setTf32(true)), "tf32");
    assertBadRequest(blas.dot(3, a, 0, b, 1), "incx");
    assertBadRequest(blas.axpy(7, 1, a, 2, b, 1), "x holds 12");
    assertBadRequest(blas.gemv(Transpose.N, 3, 3, 1, a, 3, b, 1, 0, c.view(0, 2), 1), "y holds 2");
    assertBadRequest(blas.trsm(Side.RIGHT, FillMode.LOWER, Transpose.N, Diagonal.UNIT, 2, 4, 1, a, 3, b, 2), "lda");
    assertBadRequest(blas.ger(3, 4, 1, a, 1, b, 1, c, 2), "lda");
    assertBadRequest(blas.ger(3, 4, 1, a, 1, b, 4, c, 3), "y holds 12");
    assertBadRequest(blas.geam(Transpose.T, Transpose.N, 3, 4, 1, a, 3, 1, b, 3, c, 3), "lda");
    assertBadRequest(blas.syrk(FillMode.UPPER, Transpose.N, 3, 2, 1, a, 3, 0, d, 3), "c has dtype F64");
    assertBadRequest(blas.syrk(null, Transpose.N, 3, 2, 1, a, 3, 0, c, 3), "uplo is missing");
    assertBadRequest(blas.rot(4, a, 1, a.view(2, 8), 1, 1, 0), "y overlaps x");
    assertBadRequest(blas.execute(new BlasRequest()), "op is missing");
  }
}
