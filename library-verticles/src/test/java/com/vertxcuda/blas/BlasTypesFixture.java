package com.vertxcuda.blas;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.library.HostDeviceTest;

/**
 * What the tests of every BLAS routine on F32, F64, C64 and C128 share. Values are (real,
 * imaginary) pairs whatever the dtype (a real dtype's imaginary parts are 0); a logical matrix is a
 * dense column-major array of pairs, and the tests store it the way a routine reads it (full, a
 * triangle, a band, packed) around garbage that must stay untouched, then compute the reference from
 * the logical matrix with plain loops, independently of how the engines decode the storage. Each test
 * makes its own buffers on the class's device.
 */
abstract class BlasTypesFixture extends HostDeviceTest {

  static final DType[] ALL = {DType.F32, DType.F64, DType.C64, DType.C128};
  static final DType[] REAL = {DType.F32, DType.F64};
  static final DType[] COMPLEX = {DType.C64, DType.C128};
  /** What stands in the elements a routine must neither read nor write. */
  static final double GARBAGE = 1e6;

  static double tolerance(DType t) {
    return t.component() == DType.F32 ? 2e-5 : 1e-11;
  }

  /** Pairs of {@code count} elements rounded to what {@code t} holds (F32 parts, no imaginary part for real types). */
  static double[] fit(DType t, double[] pairs) {
    double[] v = pairs.clone();
    for (int i = 0; i < v.length; i++) {
      if (!t.isComplex() && i % 2 == 1) {
        v[i] = 0;
      } else if (t.component() == DType.F32) {
        v[i] = (float) v[i];
      }
    }
    return v;
  }

  /** {@code count} random elements as pairs, rounded to {@code t}. */
  static double[] random(DType t, int count, int seed) {
    return fit(t, values(2 * count, seed));
  }

  /** Uploads pairs as a buffer of {@code t} (real dtypes take the real parts). */
  BufferHandle upload(DType t, double[] pairs) {
    int count = pairs.length / 2;
    double[] flat = new double[t.isComplex() ? pairs.length : count];
    for (int i = 0; i < flat.length; i++) {
      flat[i] = t.isComplex() ? pairs[i] : pairs[2 * i];
    }
    BufferHandle h = await(device.alloc(t, count));
    return t.component() == DType.F32 ? await(device.upload(h, floats(flat))) : await(device.upload(h, flat));
  }

  /** Asserts that {@code h} holds {@code expected} (pairs, rounded to {@code t} first). */
  void assertHolds(DType t, double[] expected, BufferHandle h, String what) {
    assertClose(fit(t, expected), download(t, h), tolerance(t), t + " " + what);
  }

  double[] download(DType t, BufferHandle h) {
    double[] flat = t.component() == DType.F32 ? widen(await(device.downloadFloats(h))) : await(device.downloadDoubles(h));
    if (t.isComplex()) {
      return flat;
    }
    double[] pairs = new double[2 * flat.length];
    for (int i = 0; i < flat.length; i++) {
      pairs[2 * i] = flat[i];
    }
    return pairs;
  }

  // ---- logical matrices (n x m pairs, column-major, no padding) ----

  static double re(double[] a, int i) {
    return a[2 * i];
  }

  static double im(double[] a, int i) {
    return a[2 * i + 1];
  }

  /** A rows x cols matrix of random elements of {@code t}. */
  static double[] general(DType t, int rows, int cols, int seed) {
    return random(t, rows * cols, seed);
  }

  /** A symmetric (or, {@code hermitian}, Hermitian with a real diagonal) n x n matrix, zero outside {@code bands} off-diagonals. */
  static double[] symmetric(DType t, int n, int bands, boolean hermitian, int seed) {
    double[] g = random(t, n * n, seed);
    double[] s = new double[2 * n * n];
    for (int j = 0; j < n; j++) {
      for (int i = 0; i <= j; i++) {
        if (j - i > bands) {
          continue;
        }
        int up = i + j * n;
        int low = j + i * n;
        s[2 * up] = g[2 * up];
        s[2 * up + 1] = i == j && hermitian ? 0 : g[2 * up + 1];
        s[2 * low] = s[2 * up];
        s[2 * low + 1] = hermitian ? -s[2 * up + 1] : s[2 * up + 1];
      }
    }
    return s;
  }

  /**
   * A triangular n x n matrix (upper or lower) of {@code bands} off-diagonals, its diagonal well away
   * from zero (solves stay well-conditioned), or all ones when {@code unit}.
   */
  static double[] triangular(DType t, int n, int bands, boolean upper, boolean unit, int seed) {
    double[] g = random(t, n * n, seed);
    double[] s = new double[2 * n * n];
    for (int j = 0; j < n; j++) {
      for (int i = 0; i < n; i++) {
        boolean inside = upper ? i <= j && j - i <= bands : i >= j && i - j <= bands;
        int at = i + j * n;
        if (!inside) {
          continue;
        }
        if (i == j) {
          s[2 * at] = unit ? 1 : fit(t, new double[] {2 + g[2 * at], 0})[0];
          s[2 * at + 1] = unit ? 0 : g[2 * at + 1];
        } else {
          s[2 * at] = g[2 * at];
          s[2 * at + 1] = g[2 * at + 1];
        }
      }
    }
    return s;
  }

  /** op(L) of a rows x cols logical matrix: N, T, or C (conjugate transpose). */
  static double[] op(double[] l, int rows, int cols, Transpose t) {
    if (t == Transpose.N) {
      return l.clone();
    }
    double[] o = new double[l.length];
    for (int j = 0; j < cols; j++) {
      for (int i = 0; i < rows; i++) {
        o[2 * (j + i * cols)] = l[2 * (i + j * rows)];
        o[2 * (j + i * cols) + 1] = t == Transpose.C ? -l[2 * (i + j * rows) + 1] : l[2 * (i + j * rows) + 1];
      }
    }
    return o;
  }

  /** The rows x cols product of a (rows x inner) and b (inner x cols). */
  static double[] times(double[] a, double[] b, int rows, int inner, int cols) {
    double[] c = new double[2 * rows * cols];
    for (int j = 0; j < cols; j++) {
      for (int i = 0; i < rows; i++) {
        double sr = 0;
        double si = 0;
        for (int p = 0; p < inner; p++) {
          double ar = a[2 * (i + p * rows)];
          double ai = a[2 * (i + p * rows) + 1];
          double br = b[2 * (p + j * inner)];
          double bi = b[2 * (p + j * inner) + 1];
          sr += ar * br - ai * bi;
          si += ar * bi + ai * br;
        }
        c[2 * (i + j * rows)] = sr;
        c[2 * (i + j * rows) + 1] = si;
      }
    }
    return c;
  }

  /** alpha p + beta c, element by element, as new pairs. */
  static double[] axpby(double ar, double ai, double[] p, double br, double bi, double[] c) {
    double[] out = new double[p.length];
    for (int i = 0; i < p.length; i += 2) {
      double cr = c == null ? 0 : c[i];
      double ci = c == null ? 0 : c[i + 1];
      out[i] = ar * p[i] - ai * p[i + 1] + br * cr - bi * ci;
      out[i + 1] = ar * p[i + 1] + ai * p[i] + br * ci + bi * cr;
    }
    return out;
  }

  // ---- storage: the logical matrix placed as a routine reads it, GARBAGE elsewhere ----

  static double[] garbage(int count) {
    double[] g = new double[2 * count];
    java.util.Arrays.fill(g, GARBAGE);
    return g;
  }

  /** A rows x cols logical matrix with leading dimension ld; {@code part} 'U' or 'L' stores only that triangle. */
  static double[] storeFull(double[] l, int rows, int cols, int ld, char part) {
    double[] s = garbage(ld * cols);
    for (int j = 0; j < cols; j++) {
      for (int i = 0; i < rows; i++) {
        if (part == 'U' && i > j || part == 'L' && i < j) {
          continue;
        }
        s[2 * (i + j * ld)] = l[2 * (i + j * rows)];
        s[2 * (i + j * ld) + 1] = l[2 * (i + j * rows) + 1];
      }
    }
    return s;
  }

  /** The triangle (upper or lower) of a square band matrix in BLAS band storage: row k + i - j (upper) or i - j (lower). */
  static double[] storeBand(double[] l, int n, int k, int ld, boolean upper) {
    double[] s = garbage(ld * n);
    for (int j = 0; j < n; j++) {
      for (int d = 0; d <= k; d++) {
        int i = upper ? j - d : j + d;
        if (i < 0 || i >= n) {
          continue;
        }
        int row = upper ? k - d : d;
        s[2 * (row + j * ld)] = l[2 * (i + j * n)];
        s[2 * (row + j * ld) + 1] = l[2 * (i + j * n) + 1];
      }
    }
    return s;
  }

  /** A general m x n band matrix (kl sub-, ku super-diagonals): element (i, j) at row ku + i - j. */
  static double[] storeGeneralBand(double[] l, int m, int n, int kl, int ku, int ld) {
    double[] s = garbage(ld * n);
    for (int j = 0; j < n; j++) {
      for (int row = 0; row < kl + ku + 1; row++) {
        int i = row - ku + j;
        if (i < 0 || i >= m) {
          continue;
        }
        s[2 * (row + j * ld)] = l[2 * (i + j * m)];
        s[2 * (row + j * ld) + 1] = l[2 * (i + j * m) + 1];
      }
    }
    return s;
  }

  /** The triangle packed column by column. */
  static double[] storePacked(double[] l, int n, boolean upper) {
    double[] s = new double[n * (n + 1)];
    int at = 0;
    for (int j = 0; j < n; j++) {
      for (int i = upper ? 0 : j; i < (upper ? j + 1 : n); i++) {
        s[2 * at] = l[2 * (i + j * n)];
        s[2 * at + 1] = l[2 * (i + j * n) + 1];
        at++;
      }
    }
    return s;
  }

  /** A vector's n elements spaced inc apart, GARBAGE between. */
  static double[] storeVector(double[] v, int inc) {
    int n = v.length / 2;
    double[] s = garbage(n == 0 ? 0 : (n - 1) * inc + 1);
    for (int i = 0; i < n; i++) {
      s[2 * i * inc] = v[2 * i];
      s[2 * i * inc + 1] = v[2 * i + 1];
    }
    return s;
  }

  /** The logical matrix of a rows x cols stored one. */
  static double[] loadFull(double[] s, int rows, int cols, int ld) {
    double[] l = new double[2 * rows * cols];
    for (int j = 0; j < cols; j++) {
      for (int i = 0; i < rows; i++) {
        l[2 * (i + j * rows)] = s[2 * (i + j * ld)];
        l[2 * (i + j * rows) + 1] = s[2 * (i + j * ld) + 1];
      }
    }
    return l;
  }
}
