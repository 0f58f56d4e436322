package com.vertxcuda.library.blas;

import com.vertxcuda.DType;
import com.vertxcuda.blas.BlasComputeType;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.blas.Diagonal;
import com.vertxcuda.blas.FillMode;
import com.vertxcuda.blas.Side;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.device.host.HostAccess;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.library.impl.EngineResult;
import com.vertxcuda.library.impl.HostResult;
import com.vertxcuda.library.impl.Operand;
import dev.ludovic.netlib.blas.BLAS;

import java.util.List;

import static com.vertxcuda.library.impl.HostOperands.read;
import static com.vertxcuda.library.impl.HostOperands.write;

/**
 * BLAS on the host backend, computed on the stream's thread: the real routines netlib's {@link BLAS}
 * has in cuBLAS's form through it, complex data and the rest (banded, packed, Hermitian, TRMM...)
 * through {@link ComplexBlas}. Every routine runs in double precision and F32 (F16, BF16) results
 * are rounded once when written back, so results are at least as accurate as cuBLAS's but not
 * bit-identical to them. TF32 is emulated by rounding
 * F32 inputs to 10 mantissa bits (round to nearest, ties away), as the tensor cores' conversion does.
 */
final class HostBlasEngine implements BlasEngine {

  private static final BLAS BLAS_IMPL = BLAS.getInstance();

  private final DeviceContext device;

  HostBlasEngine(DeviceContext device) {
    this.device = device;
  }

  @Override
  public EngineResult enqueue(GpuStream stream, BlasCall call) throws BackendException {
    HostResult result = new HostResult();
    HostAccess.enqueue(device, stream, result.captureComplex(() -> run(call)));
    return result;
  }

  @Override
  public EngineResult enqueueGemmBatch(GpuStream stream, List<BlasCall> calls) throws BackendException {
    HostResult result = new HostResult();
    HostAccess.enqueue(device, stream, result.capture(() -> {
      calls.forEach(HostBlasEngine::run);
      return 0;
    }));
    return result;
  }

  @Override
  public void close(boolean poisoned) {
  }

  /** Runs {@code call}; returns its scalar as (real, imaginary), (0, 0) where it has none. */
  private static double[] run(BlasCall call) {
    BlasRequest r = call.request();
    if (call.dtype().isComplex() && !isGemm(call.op()) || ComplexBlas.handles(call.op())) {
      return ComplexBlas.run(call, r);
    }
    return new double[] {realRun(call, r), 0};
  }

  private static boolean isGemm(BlasOp op) {
    switch (op) {
      case GEMM: case GEMM_EX: case GEMM_STRIDED_BATCHED: case GEMM_STRIDED_BATCHED_EX: case GEMM_BATCHED_EX:
        return true;
      default:
        return false;
    }
  }

  // The routines that netlib's real BLAS serves (and GEMMs of every type).
  private static double realRun(BlasCall call, BlasRequest r) {
    switch (call.op()) {
      case GEMM:
      case GEMM_EX:
      case GEMM_STRIDED_BATCHED:
      case GEMM_STRIDED_BATCHED_EX: {
        int batch = call.op() == BlasOp.GEMM_STRIDED_BATCHED || call.op() == BlasOp.GEMM_STRIDED_BATCHED_EX
          ? r.getBatchCount() : 1;
        gemm(call, r, call.a(), call.b(), call.c(), batch);
        return 0;
      }
      case GEMM_BATCHED_EX: {
        Operand[] as = call.batch(Operands.Slot.BATCH_A);
        Operand[] bs = call.batch(Operands.Slot.BATCH_B);
        Operand[] cs = call.batch(Operands.Slot.BATCH_C);
        for (int i = 0; i < cs.length; i++) {
          gemm(call, r, as[i], bs[i], cs[i], 1);
        }
        return 0;
      }
      case GEMV: {
        double[] x = read(call.x());
        double[] y = read(call.y());
        if (r.getM() > 0 && r.getN() > 0) {
          double[] a = dense(read(call.a()), 0, r.getM(), r.getN(), r.getLda());
          BLAS_IMPL.dgemv(t(r.getTransA()), r.getM(), r.getN(), r.getAlpha(), a, 0, ld(r.getM()), x, 0, r.getIncx(),
            r.getBeta(), y, 0, r.getIncy());
        }
        write(call.y(), y);
        return 0;
      }
      case GER: {
        double[] x = read(call.x());
        double[] y = read(call.y());
        double[] a = read(call.a());
        if (r.getM() > 0 && r.getN() > 0) {
          double[] da = dense(a, 0, r.getM(), r.getN(), r.getLda());
          BLAS_IMPL.dger(r.getM(), r.getN(), r.getAlpha(), x, 0, r.getIncx(), y, 0, r.getIncy(), da, 0, ld(r.getM()));
          scatter(da, a, 0, r.getM(), r.getN(), r.getLda());
        }
        write(call.a(), a);
        return 0;
      }
      case GEAM:
        geam(call, r);
        return 0;
      case SYRK: {
        double[] c = read(call.c());
        if (r.getN() > 0 && r.getK() == 0) {
          // C = beta C on the triangle, as cuBLAS does (netlib's index check refuses k = 0).
          boolean upper = r.getUplo() == FillMode.UPPER;
          for (int j = 0; j < r.getN(); j++) {
            for (int i = upper ? 0 : j; i <= (upper ? j : r.getN() - 1); i++) {
              int at = j * r.getLdc() + i;
              c[at] = r.getBeta() == 0 ? 0 : r.getBeta() * c[at];
            }
          }
        } else if (r.getN() > 0) {
          boolean n = r.getTransA() != Transpose.T;
          int aRows = n ? r.getN() : r.getK();
          double[] a = dense(read(call.a()), 0, aRows, n ? r.getK() : r.getN(), r.getLda());
          double[] dc = dense(c, 0, r.getN(), r.getN(), r.getLdc());
          BLAS_IMPL.dsyrk(r.getUplo() == FillMode.UPPER ? "U" : "L", t(r.getTransA()), r.getN(), r.getK(),
            r.getAlpha(), a, 0, ld(aRows), r.getBeta(), dc, 0, ld(r.getN()));
          scatter(dc, c, 0, r.getN(), r.getN(), r.getLdc());
        }
        write(call.c(), c);
        return 0;
      }
      case TRSM: {
        double[] b = read(call.b());
        if (r.getM() > 0 && r.getN() > 0) {
          int order = r.getSide() == Side.LEFT ? r.getM() : r.getN();
          double[] a = dense(read(call.a()), 0, order, order, r.getLda());
          double[] db = dense(b, 0, r.getM(), r.getN(), r.getLdb());
          BLAS_IMPL.dtrsm(r.getSide() == Side.LEFT ? "L" : "R", r.getUplo() == FillMode.UPPER ? "U" : "L",
            t(r.getTransA()), r.getDiag() == Diagonal.UNIT ? "U" : "N", r.getM(), r.getN(), r.getAlpha(),
            a, 0, ld(order), db, 0, ld(r.getM()));
          scatter(db, b, 0, r.getM(), r.getN(), r.getLdb());
        }
        write(call.b(), b);
        return 0;
      }
      default:
        return level1(call, r);
    }
  }

  private static double level1(BlasCall call, BlasRequest r) {
    int n = r.getN();
    int incx = r.getIncx();
    int incy = r.getIncy();
    double[] x = read(call.x());
    double[] y = call.y() == null ? null : read(call.y());
    if (n == 0) {
      return 0;
    }
    switch (call.op()) {
      case AXPY:
        BLAS_IMPL.daxpy(n, r.getAlpha(), x, 0, incx, y, 0, incy);
        write(call.y(), y);
        return 0;
      case DOT:
        return BLAS_IMPL.ddot(n, x, 0, incx, y, 0, incy);
      case NRM2:
        return BLAS_IMPL.dnrm2(n, x, 0, incx);
      case ASUM:
        return BLAS_IMPL.dasum(n, x, 0, incx);
      case SCAL:
        BLAS_IMPL.dscal(n, r.getAlpha(), x, 0, incx);
        write(call.x(), x);
        return 0;
      case IAMAX:
      case IAMIN: {
        boolean max = call.op() == BlasOp.IAMAX;
        int best = 0;
        for (int i = 1; i < n; i++) {
          double v = Math.abs(x[i * incx]);
          double b = Math.abs(x[best * incx]);
          if (max ? v > b : v < b) {
            best = i;
          }
        }
        return best + 1;
      }
      case COPY:
        BLAS_IMPL.dcopy(n, x, 0, incx, y, 0, incy);
        write(call.y(), y);
        return 0;
      case SWAP:
        BLAS_IMPL.dswap(n, x, 0, incx, y, 0, incy);
        write(call.x(), x);
        write(call.y(), y);
        return 0;
      case ROT:
        BLAS_IMPL.drot(n, x, 0, incx, y, 0, incy, r.getCosine(), r.getSine());
        write(call.x(), x);
        write(call.y(), y);
        return 0;
      default:
        throw new IllegalStateException("not a level-1 routine: " + call.op());
    }
  }

  /**
   * C = alpha op(A) op(B) + beta C over {@code batch} matrices (strided) in double precision; inputs
   * are what their dtype holds (F16 and BF16 decoded exactly), TF32 compute rounds F32 and C64
   * inputs to TF32 first, and the output is rounded once to its dtype when written.
   */
  private static void gemm(BlasCall call, BlasRequest r, Operand ao, Operand bo, Operand co, int batch) {
    boolean tf32 = r.isTf32() || call.computeType() == BlasComputeType.F32_FAST_TF32;
    double[] a = read(ao);
    double[] b = read(bo);
    double[] c = read(co);
    if (tf32) {
      toTf32(a, ao.dtype());
      toTf32(b, bo.dtype());
    }
    if (co.dtype().isComplex()) {
      complexGemm(r, a, b, c, batch);
      write(co, c);
      return;
    }
    int m = r.getM();
    int n = r.getN();
    int k = r.getK();
    if (m > 0 && n > 0) {
      for (int i = 0; i < batch; i++) {
        int aOff = (int) (i * r.getStrideA());
        int bOff = (int) (i * r.getStrideB());
        int cOff = (int) (i * r.getStrideC());
        if (k == 0) {
          for (int j = 0; j < n; j++) {
            for (int row = 0; row < m; row++) {
              int at = cOff + j * r.getLdc() + row;
              c[at] = r.getBeta() == 0 ? 0 : r.getBeta() * c[at];
            }
          }
        } else {
          boolean na = r.getTransA() != Transpose.T;
          boolean nb = r.getTransB() != Transpose.T;
          int aRows = na ? m : k;
          int bRows = nb ? k : n;
          double[] da = dense(a, aOff, aRows, na ? k : m, r.getLda());
          double[] db = dense(b, bOff, bRows, nb ? n : k, r.getLdb());
          double[] dc = dense(c, cOff, m, n, r.getLdc());
          BLAS_IMPL.dgemm(t(r.getTransA()), t(r.getTransB()), m, n, k, r.getAlpha(), da, 0, ld(aRows), db, 0,
            ld(bRows), r.getBeta(), dc, 0, ld(m));
          scatter(dc, c, cOff, m, n, r.getLdc());
        }
      }
    }
    write(co, c);
  }

  /**
   * C = alpha op(A) op(B) + beta C on complex elements ((real, imaginary) pairs, leading dimensions
   * and strides in elements), op one of N, T, C (conjugate transpose), in double precision: netlib's
   * BLAS has no complex routines.
   */
  private static void complexGemm(BlasRequest r, double[] a, double[] b, double[] c, int batch) {
    int m = r.getM();
    int n = r.getN();
    int k = r.getK();
    double ar = r.getAlpha();
    double ai = r.getAlphaImag();
    double br = r.getBeta();
    double bi = r.getBetaImag();
    boolean zeroBeta = br == 0 && bi == 0;
    for (int i = 0; i < batch; i++) {
      long ao = i * r.getStrideA();
      long bo = i * r.getStrideB();
      long co = i * r.getStrideC();
      for (int j = 0; j < n; j++) {
        for (int row = 0; row < m; row++) {
          double sr = 0;
          double si = 0;
          for (int l = 0; l < k; l++) {
            int x = (int) (ao + (r.getTransA() == Transpose.N ? (long) l * r.getLda() + row : (long) row * r.getLda() + l));
            int y = (int) (bo + (r.getTransB() == Transpose.N ? (long) j * r.getLdb() + l : (long) l * r.getLdb() + j));
            double xr = a[2 * x];
            double xi = r.getTransA() == Transpose.C ? -a[2 * x + 1] : a[2 * x + 1];
            double yr = b[2 * y];
            double yi = r.getTransB() == Transpose.C ? -b[2 * y + 1] : b[2 * y + 1];
            sr += xr * yr - xi * yi;
            si += xr * yi + xi * yr;
          }
          int at = (int) (co + (long) j * r.getLdc() + row);
          double cr = zeroBeta ? 0 : br * c[2 * at] - bi * c[2 * at + 1];
          double ci = zeroBeta ? 0 : br * c[2 * at + 1] + bi * c[2 * at];
          c[2 * at] = ar * sr - ai * si + cr;
          c[2 * at + 1] = ar * si + ai * sr + ci;
        }
      }
    }
  }

  private static void geam(BlasCall call, BlasRequest r) {
    double[] a = read(call.a());
    double[] b = read(call.b());
    double[] c = read(call.c());
    boolean ta = r.getTransA() == Transpose.T;
    boolean tb = r.getTransB() == Transpose.T;
    int lda = r.getLda();
    int ldb = r.getLdb();
    for (int j = 0; j < r.getN(); j++) {
      for (int i = 0; i < r.getM(); i++) {
        double av = ta ? a[i * lda + j] : a[j * lda + i];
        double bv = tb ? b[i * ldb + j] : b[j * ldb + i];
        c[j * r.getLdc() + i] = r.getAlpha() * av + r.getBeta() * bv;
      }
    }
    write(call.c(), c);
  }

  // netlib wants a matrix array to hold ld x cols elements, where a view holds ld x (cols - 1) +
  // rows: matrices go to netlib densely (ld = rows) and results come back into the operand's
  // elements, so any leading dimension the checks accept works (one column with ld = 2^31 - 1).
  private static double[] dense(double[] all, int first, int rows, int cols, int ld) {
    double[] d = new double[rows * cols];
    for (int j = 0; j < cols; j++) {
      System.arraycopy(all, first + j * ld, d, j * rows, rows);
    }
    return d;
  }

  private static void scatter(double[] d, double[] all, int first, int rows, int cols, int ld) {
    for (int j = 0; j < cols; j++) {
      System.arraycopy(d, j * rows, all, first + j * ld, rows);
    }
  }

  private static int ld(int rows) {
    return Math.max(1, rows);
  }

  private static String t(Transpose t) {
    return t == Transpose.T ? "T" : "N";
  }

  // F32 (and C64 parts) keep their sign, exponent and the top 10 mantissa bits, rounded to nearest (ties away).
  private static void toTf32(double[] v, DType dtype) {
    if (dtype != DType.F32 && dtype != DType.C64) {
      return;
    }
    for (int i = 0; i < v.length; i++) {
      int bits = Float.floatToRawIntBits((float) v[i]);
      if ((bits & 0x7F80_0000) != 0x7F80_0000) {
        bits = (bits + 0x1000) & 0xFFFF_E000;
      }
      v[i] = Float.intBitsToFloat(bits);
    }
  }
}
