package com.vertxcuda.library.blas;

import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.blas.Diagonal;
import com.vertxcuda.blas.FillMode;
import com.vertxcuda.blas.Side;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.library.impl.Operand;

import static com.vertxcuda.library.impl.HostOperands.read;
import static com.vertxcuda.library.impl.HostOperands.write;

/**
 * The host engine's BLAS on complex numbers, in double precision with plain loops (netlib's BLAS has
 * no complex routines): every routine on C64 and C128, and on every dtype the routines netlib does
 * not offer in the form cuBLAS has them (banded, packed, Hermitian, TRMM's out-of-place C...), real
 * elements taken as complex ones with a zero imaginary part. A matrix argument is first read into
 * its logical dense form (a band, a packed triangle, a symmetric or Hermitian triangle mirrored, a
 * triangle with its unit diagonal), the routine computed on dense matrices, and what it writes put
 * back into the elements it stores, so each storage is decoded in one place.
 */
final class ComplexBlas {

  private ComplexBlas() {
  }

  /** Whether the routine runs here whatever its dtype (netlib serves the others on real data). */
  static boolean handles(BlasOp op) {
    switch (op) {
      case GEMM: case GEMM_EX: case GEMM_STRIDED_BATCHED: case GEMM_STRIDED_BATCHED_EX: case GEMM_BATCHED_EX:
      case AXPY: case DOT: case NRM2: case SCAL: case ASUM: case IAMAX: case IAMIN: case COPY: case SWAP: case ROT:
      case GEMV: case GER: case GEAM: case SYRK: case TRSM:
        return false;
      default:
        return true;
    }
  }

  /** An operand's elements as complex numbers: (re, im) pairs for complex dtypes, im 0 for real ones. */
  private static final class Elems {
    final Operand operand;
    final double[] v;
    final boolean cx;

    Elems(Operand operand) {
      this.operand = operand;
      this.v = read(operand);
      this.cx = operand.dtype().isComplex();
    }

    double re(int i) { return cx ? v[2 * i] : v[i]; }
    double im(int i) { return cx ? v[2 * i + 1] : 0; }

    void set(int i, double re, double im) {
      if (cx) {
        v[2 * i] = re;
        v[2 * i + 1] = im;
      } else {
        v[i] = re;
      }
    }

    void save() {
      write(operand, v);
    }
  }

  /** A dense column-major complex matrix. */
  private static final class Dense {
    final int rows;
    final int cols;
    final double[] re;
    final double[] im;

    Dense(int rows, int cols) {
      this.rows = rows;
      this.cols = cols;
      this.re = new double[rows * cols];
      this.im = new double[rows * cols];
    }

    int at(int i, int j) { return i + j * rows; }

    /** op(this): as is, transposed, or conjugate-transposed. */
    Dense op(Transpose t) {
      if (t == Transpose.N) {
        return this;
      }
      Dense d = new Dense(cols, rows);
      double sign = t == Transpose.C ? -1 : 1;
      for (int j = 0; j < cols; j++) {
        for (int i = 0; i < rows; i++) {
          d.re[d.at(j, i)] = re[at(i, j)];
          d.im[d.at(j, i)] = sign * im[at(i, j)];
        }
      }
      return d;
    }

    Dense times(Dense b) {
      Dense d = new Dense(rows, b.cols);
      for (int j = 0; j < b.cols; j++) {
        for (int p = 0; p < cols; p++) {
          double br = b.re[b.at(p, j)];
          double bi = b.im[b.at(p, j)];
          for (int i = 0; i < rows; i++) {
            double ar = re[at(i, p)];
            double ai = im[at(i, p)];
            d.re[d.at(i, j)] += ar * br - ai * bi;
            d.im[d.at(i, j)] += ar * bi + ai * br;
          }
        }
      }
      return d;
    }
  }

  /** How a matrix argument is stored. */
  private enum Storage { FULL, BAND, PACKED }

  /** What the stored part of a square matrix stands for. */
  private enum Kind { SYMMETRIC, HERMITIAN, TRIANGULAR }

  /**
   * Where element (i, j), i <= j for UPPER and i >= j for LOWER, lies in a square matrix's storage,
   * or -1 outside its band.
   */
  private static int stored(Storage s, boolean upper, int n, int bands, int ld, int i, int j) {
    switch (s) {
      case BAND:
        if (upper) {
          return j - i <= bands ? bands + i - j + j * ld : -1;
        }
        return i - j <= bands ? i - j + j * ld : -1;
      case PACKED:
        return upper ? i + j * (j + 1) / 2 : i - j + j * n - j * (j - 1) / 2;
      default:
        return i + j * ld;
    }
  }

  /** The n x n matrix a square symmetric, Hermitian or triangular argument stands for. */
  private static Dense square(Elems a, Kind kind, Storage s, FillMode uplo, Diagonal diag, int n, int bands, int ld) {
    boolean upper = uplo == FillMode.UPPER;
    Dense d = new Dense(n, n);
    for (int j = 0; j < n; j++) {
      for (int i = upper ? 0 : j; i < (upper ? j + 1 : n); i++) {
        int at = stored(s, upper, n, bands, ld, i, j);
        if (at < 0) {
          continue;
        }
        double re = a.re(at);
        double im = a.im(at);
        if (i == j) {
          im = kind == Kind.HERMITIAN ? 0 : im; // BLAS reads a Hermitian diagonal as real
          if (kind == Kind.TRIANGULAR && diag == Diagonal.UNIT) {
            re = 1;
            im = 0;
          }
        }
        d.re[d.at(i, j)] = re;
        d.im[d.at(i, j)] = im;
        if (i != j && kind != Kind.TRIANGULAR) {
          d.re[d.at(j, i)] = re;
          d.im[d.at(j, i)] = kind == Kind.HERMITIAN ? -im : im;
        }
      }
    }
    return d;
  }

  /** A general rows x cols matrix as stored (leading dimension ld), starting at element {@code first}. */
  private static Dense general(Elems a, int rows, int cols, int ld) {
    Dense d = new Dense(rows, cols);
    for (int j = 0; j < cols; j++) {
      for (int i = 0; i < rows; i++) {
        d.re[d.at(i, j)] = a.re(i + j * ld);
        d.im[d.at(i, j)] = a.im(i + j * ld);
      }
    }
    return d;
  }

  /** GBMV's m x n band matrix of kl sub- and ku super-diagonals. */
  private static Dense band(Elems a, int m, int n, int kl, int ku, int ld) {
    Dense d = new Dense(m, n);
    for (int j = 0; j < n; j++) {
      for (int i = Math.max(0, j - ku); i < Math.min(m, j + kl + 1); i++) {
        int at = ku + i - j + j * ld;
        d.re[d.at(i, j)] = a.re(at);
        d.im[d.at(i, j)] = a.im(at);
      }
    }
    return d;
  }

  private static Dense vector(Elems x, int n, int inc) {
    Dense d = new Dense(n, 1);
    for (int i = 0; i < n; i++) {
      d.re[i] = x.re(i * inc);
      d.im[i] = x.im(i * inc);
    }
    return d;
  }

  private static void putVector(Dense d, Elems x, int inc) {
    for (int i = 0; i < d.rows; i++) {
      x.set(i * inc, d.re[i], d.im[i]);
    }
  }

  /**
   * out(i, j) = alpha p(i, j) + beta out(i, j) over the rows x cols elements of a general operand (ld)
   * (rowStep 1) or of a vector (p one column, rowStep its increment),
   * or its uplo triangle where {@code uplo} is set; a zero beta ignores what out held (BLAS semantics).
   * {@code realDiagonal} sets the imaginary part of the diagonal to zero (Hermitian results).
   */
  private static void update(Elems out, int rowStep, int ld, Dense p, double ar, double ai, double br, double bi,
                             FillMode uplo, boolean realDiagonal) {
    boolean zeroBeta = br == 0 && bi == 0;
    for (int j = 0; j < p.cols; j++) {
      int from = uplo == FillMode.LOWER ? j : 0;
      int to = uplo == FillMode.UPPER ? Math.min(j + 1, p.rows) : p.rows;
      for (int i = from; i < to; i++) {
        int at = i * rowStep + j * ld;
        double cr = zeroBeta ? 0 : br * out.re(at) - bi * out.im(at);
        double ci = zeroBeta ? 0 : br * out.im(at) + bi * out.re(at);
        double pr = p.re[p.at(i, j)];
        double pi = p.im[p.at(i, j)];
        double im = ar * pi + ai * pr + ci;
        out.set(at, ar * pr - ai * pi + cr, realDiagonal && i == j ? 0 : im);
      }
    }
  }

  /** Solves t z = b for z in place, t n x n triangular (upper or lower as its elements are). */
  private static void solve(Dense t, boolean upper, double[] br, double[] bi) {
    int n = t.rows;
    for (int step = 0; step < n; step++) {
      int i = upper ? n - 1 - step : step;
      double sr = br[i];
      double si = bi[i];
      for (int p = upper ? i + 1 : 0; p < (upper ? n : i); p++) {
        double tr = t.re[t.at(i, p)];
        double ti = t.im[t.at(i, p)];
        sr -= tr * br[p] - ti * bi[p];
        si -= tr * bi[p] + ti * br[p];
      }
      double dr = t.re[t.at(i, i)];
      double di = t.im[t.at(i, i)];
      double mag = dr * dr + di * di;
      br[i] = (sr * dr + si * di) / mag;
      bi[i] = (si * dr - sr * di) / mag;
    }
  }

  private static Storage storage(BlasOp op) {
    switch (op) {
      case GBMV: case SBMV: case HBMV: case TBMV: case TBSV:
        return Storage.BAND;
      case SPMV: case HPMV: case TPMV: case TPSV: case SPR: case HPR: case SPR2: case HPR2:
        return Storage.PACKED;
      default:
        return Storage.FULL;
    }
  }

  private static boolean hermitian(BlasOp op) {
    switch (op) {
      case HEMV: case HBMV: case HPMV: case HER: case HER2: case HPR: case HPR2: case HEMM: case HERK: case HER2K:
        return true;
      default:
        return false;
    }
  }

  /** Runs {@code call}; returns its scalar as (real, imaginary), (0, 0) where it has none. */
  static double[] run(BlasCall call, BlasRequest r) {
    BlasOp op = call.op();
    switch (op) {
      case GEMV: case GBMV: case SYMV: case HEMV: case SBMV: case HBMV: case SPMV: case HPMV:
        matrixVector(call, r, op);
        return new double[2];
      case TRMV: case TBMV: case TPMV: case TRSV: case TBSV: case TPSV:
        triangularVector(call, r, op);
        return new double[2];
      case GER: case GERC: case SYR: case HER: case SYR2: case HER2: case SPR: case HPR: case SPR2: case HPR2:
        rankUpdate(call, r, op);
        return new double[2];
      case SYMM: case HEMM:
        symm(call, r, op);
        return new double[2];
      case SYRK: case HERK: case SYR2K: case HER2K:
        rankK(call, r, op);
        return new double[2];
      case TRMM: case TRSM:
        triangularMatrix(call, r, op);
        return new double[2];
      default:
        return level1(call, r, op);
    }
  }

  private static void matrixVector(BlasCall call, BlasRequest r, BlasOp op) {
    Elems a = new Elems(call.a());
    Elems y = new Elems(call.y());
    int n = r.getN();
    Dense m;
    Transpose trans = Transpose.N;
    if (op == BlasOp.GEMV) {
      m = general(a, r.getM(), n, r.getLda());
      trans = r.getTransA();
    } else if (op == BlasOp.GBMV) {
      m = band(a, r.getM(), n, r.getKl(), r.getKu(), r.getLda());
      trans = r.getTransA();
    } else {
      m = square(a, hermitian(op) ? Kind.HERMITIAN : Kind.SYMMETRIC, storage(op), r.getUplo(), Diagonal.NON_UNIT, n,
        r.getK(), r.getLda());
    }
    Dense opm = m.op(trans);
    Dense p = opm.times(vector(new Elems(call.x()), opm.cols, r.getIncx()));
    update(y, r.getIncy(), 0, p, r.getAlpha(), r.getAlphaImag(), r.getBeta(), r.getBetaImag(), null, false);
    y.save();
  }

  private static void triangularVector(BlasCall call, BlasRequest r, BlasOp op) {
    int n = r.getN();
    Dense t = square(new Elems(call.a()), Kind.TRIANGULAR, storage(op), r.getUplo(), r.getDiag(), n, r.getK(),
      r.getLda()).op(r.getTransA());
    Elems x = new Elems(call.x());
    Dense v = vector(x, n, r.getIncx());
    if (op == BlasOp.TRMV || op == BlasOp.TBMV || op == BlasOp.TPMV) {
      v = t.times(v);
    } else {
      solve(t, (r.getUplo() == FillMode.UPPER) == (r.getTransA() == Transpose.N), v.re, v.im);
    }
    putVector(v, x, r.getIncx());
    x.save();
  }

  private static void rankUpdate(BlasCall call, BlasRequest r, BlasOp op) {
    int n = r.getN();
    boolean general = op == BlasOp.GER || op == BlasOp.GERC;
    int m = general ? r.getM() : n;
    Dense x = vector(new Elems(call.x()), m, r.getIncx());
    Dense y = call.y() == null ? x : vector(new Elems(call.y()), n, r.getIncy());
    boolean herm = hermitian(op);
    boolean conjugateY = op == BlasOp.GERC || herm;
    boolean two = op == BlasOp.SYR2 || op == BlasOp.HER2 || op == BlasOp.SPR2 || op == BlasOp.HPR2;
    double ar = r.getAlpha();
    double ai = r.getAlphaImag();
    // u(i, j) = alpha x_i y'_j (+ alpha' y_i x'_j for the rank-2 ones), ' conjugating for GERC and HE*.
    Dense u = new Dense(m, n);
    outer(u, x, y, ar, ai, conjugateY);
    if (two) {
      outer(u, y, x, ar, herm ? -ai : ai, conjugateY);
    }
    Elems a = new Elems(call.a());
    Storage s = storage(op);
    boolean upper = r.getUplo() == FillMode.UPPER;
    for (int j = 0; j < n; j++) {
      int from = general || upper ? 0 : j;
      int to = general || !upper ? m : j + 1;
      for (int i = from; i < to; i++) {
        int at = general ? i + j * r.getLda() : stored(s, upper, n, 0, r.getLda(), i, j);
        double im = a.im(at) + u.im[u.at(i, j)];
        a.set(at, a.re(at) + u.re[u.at(i, j)], herm && i == j ? 0 : im);
      }
    }
    a.save();
  }

  // u += alpha x y^T (y conjugated when asked).
  private static void outer(Dense u, Dense x, Dense y, double ar, double ai, boolean conjugateY) {
    for (int j = 0; j < u.cols; j++) {
      double yr = y.re[j];
      double yi = conjugateY ? -y.im[j] : y.im[j];
      double sr = ar * yr - ai * yi;
      double si = ar * yi + ai * yr;
      for (int i = 0; i < u.rows; i++) {
        u.re[u.at(i, j)] += x.re[i] * sr - x.im[i] * si;
        u.im[u.at(i, j)] += x.re[i] * si + x.im[i] * sr;
      }
    }
  }

  private static void symm(BlasCall call, BlasRequest r, BlasOp op) {
    int m = r.getM();
    int n = r.getN();
    boolean left = r.getSide() == Side.LEFT;
    int order = left ? m : n;
    Dense a = square(new Elems(call.a()), op == BlasOp.HEMM ? Kind.HERMITIAN : Kind.SYMMETRIC, Storage.FULL,
      r.getUplo(), Diagonal.NON_UNIT, order, 0, r.getLda());
    Dense b = general(new Elems(call.b()), m, n, r.getLdb());
    Elems c = new Elems(call.c());
    update(c, 1, r.getLdc(), left ? a.times(b) : b.times(a), r.getAlpha(), r.getAlphaImag(), r.getBeta(),
      r.getBetaImag(), null, false);
    c.save();
  }

  private static void rankK(BlasCall call, BlasRequest r, BlasOp op) {
    int n = r.getN();
    int k = r.getK();
    boolean na = r.getTransA() == Transpose.N;
    boolean herm = op == BlasOp.HERK || op == BlasOp.HER2K;
    Transpose back = herm ? Transpose.C : Transpose.T;
    Dense opA = general(new Elems(call.a()), na ? n : k, na ? k : n, r.getLda()).op(r.getTransA());
    Elems c = new Elems(call.c());
    double ar = r.getAlpha();
    double ai = r.getAlphaImag();
    Dense p;
    if (op == BlasOp.SYRK || op == BlasOp.HERK) {
      p = opA.times(opA.op(back));
    } else {
      Dense opB = general(new Elems(call.b()), na ? n : k, na ? k : n, r.getLdb()).op(r.getTransA());
      Dense first = opA.times(opB.op(back));
      Dense second = opB.times(opA.op(back));
      // alpha A B' + alpha'' B A' with alpha'' = conj(alpha) for HER2K, alpha for SYR2K: folded into p, alpha 1.
      p = new Dense(n, n);
      double sai = herm ? -ai : ai;
      for (int i = 0; i < p.re.length; i++) {
        p.re[i] = ar * first.re[i] - ai * first.im[i] + ar * second.re[i] - sai * second.im[i];
        p.im[i] = ar * first.im[i] + ai * first.re[i] + ar * second.im[i] + sai * second.re[i];
      }
      ar = 1;
      ai = 0;
    }
    update(c, 1, r.getLdc(), p, ar, ai, r.getBeta(), r.getBetaImag(), r.getUplo(), herm);
    c.save();
  }

  private static void triangularMatrix(BlasCall call, BlasRequest r, BlasOp op) {
    int m = r.getM();
    int n = r.getN();
    boolean left = r.getSide() == Side.LEFT;
    int order = left ? m : n;
    Dense t = square(new Elems(call.a()), Kind.TRIANGULAR, Storage.FULL, r.getUplo(), r.getDiag(), order, 0,
      r.getLda()).op(r.getTransA());
    Elems b = new Elems(call.b());
    Dense bm = general(b, m, n, r.getLdb());
    if (op == BlasOp.TRMM) {
      Elems c = new Elems(call.c());
      update(c, 1, r.getLdc(), left ? t.times(bm) : bm.times(t), r.getAlpha(), r.getAlphaImag(), 0, 0, null, false);
      c.save();
      return;
    }
    // TRSM: op(A) X = alpha B column by column (LEFT); X op(A) = alpha B is op(A)^T X^T = alpha B^T row by row.
    boolean upper = (r.getUplo() == FillMode.UPPER) == (r.getTransA() == Transpose.N);
    Dense solver = left ? t : t.op(Transpose.T);
    int count = left ? n : m;
    for (int v = 0; v < count; v++) {
      double[] re = new double[order];
      double[] im = new double[order];
      for (int i = 0; i < order; i++) {
        int at = left ? bm.at(i, v) : bm.at(v, i);
        re[i] = r.getAlpha() * bm.re[at] - r.getAlphaImag() * bm.im[at];
        im[i] = r.getAlpha() * bm.im[at] + r.getAlphaImag() * bm.re[at];
      }
      solve(solver, left == upper, re, im);
      for (int i = 0; i < order; i++) {
        int at = left ? bm.at(i, v) : bm.at(v, i);
        bm.re[at] = re[i];
        bm.im[at] = im[i];
      }
    }
    update(b, 1, r.getLdb(), bm, 1, 0, 0, 0, null, false);
    b.save();
  }

  private static double[] level1(BlasCall call, BlasRequest r, BlasOp op) {
    int n = r.getN();
    int incx = r.getIncx();
    int incy = r.getIncy();
    Elems x = new Elems(call.x());
    Elems y = call.y() == null ? null : new Elems(call.y());
    double ar = r.getAlpha();
    double ai = r.getAlphaImag();
    double sr = 0;
    double si = 0;
    int best = 0;
    for (int i = 0; i < n; i++) {
      int xi = i * incx;
      int yi = i * incy;
      double xr = x.re(xi);
      double xm = x.im(xi);
      switch (op) {
        case AXPY:
          y.set(yi, y.re(yi) + ar * xr - ai * xm, y.im(yi) + ar * xm + ai * xr);
          break;
        case DOT:
        case DOTC: {
          double cm = op == BlasOp.DOTC ? -xm : xm;
          sr += xr * y.re(yi) - cm * y.im(yi);
          si += xr * y.im(yi) + cm * y.re(yi);
          break;
        }
        case NRM2:
          sr = Math.hypot(sr, Math.hypot(xr, xm));
          break;
        case ASUM:
          sr += Math.abs(xr) + Math.abs(xm);
          break;
        case SCAL:
          x.set(xi, ar * xr - ai * xm, ar * xm + ai * xr);
          break;
        case IAMAX:
        case IAMIN: {
          double v = Math.abs(xr) + Math.abs(xm);
          double b = Math.abs(x.re(best * incx)) + Math.abs(x.im(best * incx));
          best = op == BlasOp.IAMAX ? (v > b ? i : best) : (v < b ? i : best);
          break;
        }
        case COPY:
          y.set(yi, xr, xm);
          break;
        case SWAP:
          x.set(xi, y.re(yi), y.im(yi));
          y.set(yi, xr, xm);
          break;
        case ROT: {
          // x = c x + s y, y = c y - conj(s) x.
          double c = r.getCosine();
          double s = r.getSine();
          double sm = r.getSineImag();
          double yr = y.re(yi);
          double ym = y.im(yi);
          x.set(xi, c * xr + s * yr - sm * ym, c * xm + s * ym + sm * yr);
          y.set(yi, c * yr - (s * xr + sm * xm), c * ym - (s * xm - sm * xr));
          break;
        }
        default:
          throw new IllegalStateException("not a level-1 routine: " + op);
      }
    }
    switch (op) {
      case AXPY: case COPY:
        y.save();
        break;
      case SCAL:
        x.save();
        break;
      case SWAP: case ROT:
        x.save();
        y.save();
        break;
      case IAMAX: case IAMIN:
        return new double[] {n == 0 ? 0 : best + 1, 0};
      default:
        break;
    }
    return new double[] {sr, si};
  }
}
