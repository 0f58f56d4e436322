package com.vertxcuda.library.blas;

import com.vertxcuda.DType;
import com.vertxcuda.blas.BlasComputeType;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasReply;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.blas.Side;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.library.blas.Operands.Shape;
import com.vertxcuda.library.blas.Operands.Slot;
import com.vertxcuda.library.impl.Operand;
import com.vertxcuda.library.impl.RequestChecks;

import java.util.List;

import static com.vertxcuda.library.blas.Operands.Slot.A;
import static com.vertxcuda.library.blas.Operands.Slot.B;
import static com.vertxcuda.library.blas.Operands.Slot.BATCH_A;
import static com.vertxcuda.library.blas.Operands.Slot.BATCH_B;
import static com.vertxcuda.library.blas.Operands.Slot.BATCH_C;
import static com.vertxcuda.library.blas.Operands.Slot.C;
import static com.vertxcuda.library.blas.Operands.Slot.X;
import static com.vertxcuda.library.blas.Operands.Slot.Y;
import static com.vertxcuda.library.blas.Operands.matrix;
import static com.vertxcuda.library.blas.Operands.packed;
import static com.vertxcuda.library.blas.Operands.stridedMatrices;
import static com.vertxcuda.library.blas.Operands.vector;
import static com.vertxcuda.library.impl.RequestChecks.bad;
import static com.vertxcuda.library.impl.RequestChecks.nonNegative;
import static com.vertxcuda.library.impl.RequestChecks.positive;
import static com.vertxcuda.library.impl.RequestChecks.require;

/**
 * A {@link BlasRequest} that passed every check: handles resolved, shapes, leading dimensions,
 * increments and strides within the buffers, dtypes agreeing, no output overlapping an input.
 * Engines run it without further checks. Each routine declares its operands once on {@code Operands},
 * which runs those checks the same way for all.
 */
public final class BlasCall {

  private static final DType[] REAL = {DType.F32, DType.F64};
  private static final DType[] COMPLEX = {DType.C64, DType.C128};
  private static final DType[] REAL_OR_COMPLEX = {DType.F32, DType.F64, DType.C64, DType.C128};
  private static final DType[] EX = {DType.F16, DType.BF16, DType.F32, DType.F64, DType.C64, DType.C128};

  private final BlasRequest request;
  private final DType dtype;
  // The operands by Slot ordinal, null where the routine has none in that slot.
  private final Operand[] operands;
  // A listed slot's members by Slot ordinal, null for the others.
  private final Operand[][] members;
  // Immutable, built once by the recipe (a batch of small GEMMs validates hundreds of thousands a second).
  private final List<Operand> reads;
  private final List<Operand> writes;
  private final Operand output;
  private BlasComputeType computeType = BlasComputeType.DEFAULT;

  BlasCall(BlasRequest request, DType dtype, Operand[] operands, Operand[][] members, List<Operand> reads,
           List<Operand> writes, Operand output) {
    this.request = request;
    this.dtype = dtype;
    this.operands = operands;
    this.members = members;
    this.reads = reads;
    this.writes = writes;
    this.output = output;
  }

  public BlasRequest request() { return request; }
  public BlasOp op() { return request.getOp(); }
  /** Element type of the computation's output (a GEMM_EX's C; every other routine's operands share it). */
  public DType dtype() { return dtype; }
  public Operand a() { return operands[A.ordinal()]; }
  public Operand b() { return operands[B.ordinal()]; }
  public Operand c() { return operands[C.ordinal()]; }
  public Operand x() { return operands[X.ordinal()]; }
  public Operand y() { return operands[Y.ordinal()]; }
  /** GEMM_BATCHED_EX's members of {@code slot} (BATCH_A, BATCH_B or BATCH_C), in order. */
  public Operand[] batch(Operands.Slot slot) { return members[slot.ordinal()]; }
  /** The Ex GEMMs' compute type, DEFAULT resolved (F32, F32_FAST_TF32, F16 or F64); DEFAULT for the others. */
  public BlasComputeType computeType() { return computeType; }

  public List<Operand> reads() { return reads; }
  public List<Operand> writes() { return writes; }

  /** Whether the routine answers with a scalar computed on the device. */
  public boolean isScalar() {
    switch (op()) {
      case DOT: case DOTC: case NRM2: case ASUM: case IAMAX: case IAMIN: return true;
      default: return false;
    }
  }

  /** The reply, given the scalar result (its imaginary part for a complex dot) where the routine has one. */
  public BlasReply reply(double scalar, double scalarImag) {
    BlasReply r = new BlasReply().setOutput(output == null ? null : output.handle());
    if (op() == BlasOp.IAMAX || op() == BlasOp.IAMIN) {
      r.setIndex((int) scalar);
    } else if (isScalar()) {
      r.setValue(scalar).setValueImag(scalarImag);
    }
    return r;
  }

  /** Validates {@code r} against the buffers of {@code table}'s context; BAD_REQUEST names the field. */
  public static BlasCall of(BlasRequest r, LibraryContext table) {
    BlasOp op = present(r.getOp(), "op");
    BlasCall call = recipe(op, r, table);
    call.checkScalarsAndTransposes();
    return call;
  }

  // Each routine's operands, declared once: which slots, read or written, in what shape.
  private static BlasCall recipe(BlasOp op, BlasRequest r, LibraryContext table) {
    switch (op) {
      case GEMM:
      case GEMM_STRIDED_BATCHED:
      case GEMM_EX:
      case GEMM_STRIDED_BATCHED_EX:
      case GEMM_BATCHED_EX:
        return gemm(r, table);
      case GEAM:
        return geam(r, table);
      case SYRK:
      case HERK:
      case SYR2K:
      case HER2K:
        return rankK(r, table);
      case SYMM:
      case HEMM:
      case TRMM:
      case TRSM:
        return sided(r, table);
      case GEMV:
      case GBMV:
      case SYMV:
      case HEMV:
      case SBMV:
      case HBMV:
      case SPMV:
      case HPMV:
        return matrixVector(r, table);
      case TRMV:
      case TBMV:
      case TPMV:
      case TRSV:
      case TBSV:
      case TPSV:
        return triangularVector(r, table);
      case GER:
      case GERC:
      case SYR:
      case HER:
      case SYR2:
      case HER2:
      case SPR:
      case HPR:
      case SPR2:
      case HPR2:
        return rankUpdate(r, table);
      default:
        return level1(r, table);
    }
  }

  /** The dtypes a routine takes, as cuBLAS offers it. */
  private static DType[] dtypes(BlasOp op) {
    switch (op) {
      case GEAM: case SBMV: case SPMV: case SPR: case SPR2:
        return REAL;
      case DOTC: case GERC: case HEMV: case HBMV: case HPMV: case HER: case HER2: case HPR: case HPR2: case HEMM:
      case HERK: case HER2K:
        return COMPLEX;
      case GEMM_EX: case GEMM_BATCHED_EX: case GEMM_STRIDED_BATCHED_EX:
        return EX;
      default:
        return REAL_OR_COMPLEX;
    }
  }

  private static boolean isEx(BlasOp op) {
    return op == BlasOp.GEMM_EX || op == BlasOp.GEMM_BATCHED_EX || op == BlasOp.GEMM_STRIDED_BATCHED_EX;
  }

  /**
   * The rules on scalars and transposes that hang on the dtype: imaginary parts and conjugate
   * transposes for complex data only; real alpha (HER, HPR, HERK) and beta (HERK, HER2K) where cuBLAS
   * takes them real; SYRK and SYR2K on complex data take N or T, HERK and HER2K N or C.
   */
  private void checkScalarsAndTransposes() {
    BlasRequest r = request;
    BlasOp op = op();
    boolean complex = dtype.isComplex();
    if (!complex) {
      // Checked for every real request: the message is made only for a failure.
      require(r.getAlphaImag() == 0, () -> "alphaImag" + complexOnly());
      require(r.getBetaImag() == 0, () -> "betaImag" + complexOnly());
      require(r.getSineImag() == 0, () -> "sineImag" + complexOnly());
      require(r.getTransA() != Transpose.C, () -> "transA C (conjugate transpose)" + complexOnly());
      require(r.getTransB() != Transpose.C, () -> "transB C (conjugate transpose)" + complexOnly());
      return;
    }
    if (op == BlasOp.HER || op == BlasOp.HPR || op == BlasOp.HERK) {
      require(r.getAlphaImag() == 0, () -> "alphaImag must be 0: " + op + " takes a real alpha");
    }
    if (op == BlasOp.HERK || op == BlasOp.HER2K) {
      require(r.getBetaImag() == 0, () -> "betaImag must be 0: " + op + " takes a real beta");
      require(r.getTransA() != Transpose.T, () -> "transA T: " + op + " takes N or C");
    }
    if (op == BlasOp.SYRK || op == BlasOp.SYR2K) {
      require(r.getTransA() != Transpose.C, () -> "transA C: complex " + op + " takes N or T");
    }
  }

  private String complexOnly() {
    return " applies to complex (C64, C128) data only, " + op() + " here is on " + dtype;
  }

  private static Transpose trans(Transpose t, String field) {
    return present(t, field);
  }

  private static <T> T present(T v, String field) {
    if (v == null) {
      throw bad(field + " is missing");
    }
    return v;
  }

  /**
   * A GEMM's matrices as stored (op(A) m x k, op(B) k x n, C m x n; a pointer-array batch's members
   * likewise), their sizes read from the request: one shape for every slot, so the recipe's call of
   * it sees one class.
   */
  private static final Shape GEMM_MATRIX = (r, s, field, h, written) -> {
    int rows = r.getM();
    int cols = r.getN();
    if (s == A || s == BATCH_A) {
      boolean asIs = r.getTransA() == Transpose.N;
      rows = asIs ? r.getM() : r.getK();
      cols = asIs ? r.getK() : r.getM();
    } else if (s == B || s == BATCH_B) {
      boolean asIs = r.getTransB() == Transpose.N;
      rows = asIs ? r.getK() : r.getN();
      cols = asIs ? r.getN() : r.getK();
    }
    return RequestChecks.matrix(h, field, rows, cols, s.step(r), s.stepField);
  };
  /** GEMM's recipe, declared once: a coalesced batch checks its GEMMs one by one, so none makes a recipe. */
  private static final Operands GEMM = Operands.recipe(REAL_OR_COMPLEX).read(A, GEMM_MATRIX).read(B, GEMM_MATRIX)
    .written(C, GEMM_MATRIX);

  private static BlasCall gemm(BlasRequest r, LibraryContext table) {
    BlasOp op = r.getOp();
    Transpose ta = trans(r.getTransA(), "transA");
    Transpose tb = trans(r.getTransB(), "transB");
    int m = nonNegative(r.getM(), "m");
    int n = nonNegative(r.getN(), "n");
    int k = nonNegative(r.getK(), "k");
    if (op == BlasOp.GEMM) {
      BlasCall call = GEMM.call(r, table);
      require(!r.isTf32() || call.dtype() == DType.F32, () -> "tf32 applies to F32 only, c is " + call.dtype());
      return call;
    }
    boolean na = ta == Transpose.N;
    boolean nb = tb == Transpose.N;
    boolean ex = isEx(op);
    Shape aShape = GEMM_MATRIX;
    Shape bShape = GEMM_MATRIX;
    Shape cShape = GEMM_MATRIX;
    Slot[] abc = {A, B, C};
    if (op == BlasOp.GEMM_STRIDED_BATCHED || op == BlasOp.GEMM_STRIDED_BATCHED_EX) {
      aShape = stridedMatrices(na ? m : k, na ? k : m);
      bShape = stridedMatrices(nb ? k : n, nb ? n : k);
      cShape = stridedMatrices(m, n);
    } else if (op == BlasOp.GEMM_BATCHED_EX) {
      present(r.getBatchA(), "batchA");
      positive(r.getBatchCount(), "batchCount");
      abc = new Slot[] {BATCH_A, BATCH_B, BATCH_C};
    }
    Operands ops = Operands.of(r, table, dtypes(op)).read(abc[0], aShape).read(abc[1], bShape);
    // The Ex GEMMs' output may differ from their inputs (F16 in, F32 out); the checks decide which pairs go.
    ops = ex ? ops.written(abc[2], cShape, EX) : ops.written(abc[2], cShape);
    BlasCall call = ops.call();
    if (ex) {
      // A listed slot's first member stands in its slot, so the input dtype is always there.
      call.computeType = exComputeType(r, call.operands[abc[0].ordinal()].dtype(), call.dtype());
    } else {
      require(!r.isTf32() || call.dtype() == DType.F32, () -> "tf32 applies to F32 only, c is " + call.dtype());
    }
    return call;
  }

  /**
   * The compute type of an Ex GEMM with inputs {@code in} and output {@code out}, DEFAULT and tf32
   * resolved; BAD_REQUEST where cuBLAS has no such GEMM. The pairs: F16 in with F16 out (F16 or F32
   * compute) or F32 out; BF16 in with BF16 or F32 out; F32 and C64 throughout (F32 or TF32 compute);
   * F64 and C128 throughout (F64 compute).
   */
  private static BlasComputeType exComputeType(BlasRequest r, DType in, DType out) {
    BlasComputeType asked = present(r.getComputeType(), "computeType");
    boolean single = in != DType.F64 && in != DType.C128;
    BlasComputeType ct = asked == BlasComputeType.DEFAULT ? single ? BlasComputeType.F32 : BlasComputeType.F64 : asked;
    if (r.isTf32()) {
      BlasComputeType before = ct;
      require(ct == BlasComputeType.F32 || ct == BlasComputeType.F32_FAST_TF32,
        () -> "tf32 applies to the F32 compute type only, computeType is " + before);
      ct = BlasComputeType.F32_FAST_TF32;
    }
    boolean ok;
    switch (in) {
      case F16:
        ok = out == DType.F16 && (ct == BlasComputeType.F16 || ct == BlasComputeType.F32)
          || out == DType.F32 && ct == BlasComputeType.F32;
        break;
      case BF16:
        ok = (out == DType.BF16 || out == DType.F32) && ct == BlasComputeType.F32;
        break;
      case F32:
      case C64:
        ok = out == in && (ct == BlasComputeType.F32 || ct == BlasComputeType.F32_FAST_TF32);
        break;
      default: // F64, C128
        ok = out == in && ct == BlasComputeType.F64;
    }
    BlasComputeType resolved = ct;
    require(ok, () -> "unsupported type combination: inputs " + in + ", c " + out + ", computeType " + resolved
      + " (cuBLAS takes F16 in with F16 or F32 out, BF16 in with BF16 or F32 out, F32, C64, F64 and C128 "
      + "throughout; F16 compute for F16 only, F32 or F32_FAST_TF32 for F32 and C64, F64 for F64 and C128)");
    return ct;
  }

  private static BlasCall geam(BlasRequest r, LibraryContext table) {
    boolean na = trans(r.getTransA(), "transA") == Transpose.N;
    boolean nb = trans(r.getTransB(), "transB") == Transpose.N;
    int m = nonNegative(r.getM(), "m");
    int n = nonNegative(r.getN(), "n");
    // cuBLAS computes in place when C is A (or B) untransposed with the same leading dimension.
    return Operands.of(r, table, REAL)
      .readOrInPlace(A, matrix(na ? m : n, na ? n : m), na && r.getLda() == r.getLdc())
      .readOrInPlace(B, matrix(nb ? m : n, nb ? n : m), nb && r.getLdb() == r.getLdc())
      .written(C, matrix(m, n)).call();
  }

  /** SYRK, HERK (A), SYR2K, HER2K (A and B): op(A) is n x k, C n x n, its uplo triangle written. */
  private static BlasCall rankK(BlasRequest r, LibraryContext table) {
    present(r.getUplo(), "uplo");
    boolean na = trans(r.getTransA(), "transA") == Transpose.N;
    int n = nonNegative(r.getN(), "n");
    int k = nonNegative(r.getK(), "k");
    Shape ab = matrix(na ? n : k, na ? k : n);
    Operands ops = Operands.of(r, table, dtypes(r.getOp())).read(A, ab);
    if (r.getOp() == BlasOp.SYR2K || r.getOp() == BlasOp.HER2K) {
      ops = ops.read(B, ab);
    }
    return ops.written(C, matrix(n, n)).call();
  }

  /**
   * SYMM, HEMM (C = alpha A B + beta C), TRMM (C = alpha op(A) B, C may be B itself with the same
   * leading dimension, as cuBLAS allows) and TRSM (B solved in place): A is m x m on the LEFT, n x n
   * on the RIGHT.
   */
  private static BlasCall sided(BlasRequest r, LibraryContext table) {
    BlasOp op = r.getOp();
    Side side = present(r.getSide(), "side");
    present(r.getUplo(), "uplo");
    boolean triangular = op == BlasOp.TRMM || op == BlasOp.TRSM;
    if (triangular) {
      present(r.getDiag(), "diag");
      trans(r.getTransA(), "transA");
    }
    int m = nonNegative(r.getM(), "m");
    int n = nonNegative(r.getN(), "n");
    int order = side == Side.LEFT ? m : n;
    Operands ops = Operands.of(r, table, dtypes(op)).read(A, matrix(order, order));
    switch (op) {
      case TRSM:
        return ops.written(B, matrix(m, n)).call();
      case TRMM:
        return ops.readOrInPlace(B, matrix(m, n), r.getLdb() == r.getLdc()).written(C, matrix(m, n)).call();
      default:
        return ops.read(B, matrix(m, n)).written(C, matrix(m, n)).call();
    }
  }

  /** How a level-2 routine stores its A: as stored (full), as a band of {@code bands} rows, packed. */
  private static Shape storedA(BlasOp op, int rows, int cols, int bands) {
    switch (op) {
      case GBMV: case SBMV: case HBMV: case TBMV: case TBSV:
        return matrix(bands, cols);
      case SPMV: case HPMV: case TPMV: case TPSV: case SPR: case HPR: case SPR2: case HPR2:
        return packed(cols);
      default:
        return matrix(rows, cols);
    }
  }

  /** GEMV, GBMV (A m x n, op(A) applied), the symmetric and Hermitian ones (A n x n on its uplo triangle). */
  private static BlasCall matrixVector(BlasRequest r, LibraryContext table) {
    BlasOp op = r.getOp();
    int m;
    int n = nonNegative(r.getN(), "n");
    int bands;
    boolean na = true;
    if (op == BlasOp.GEMV || op == BlasOp.GBMV) {
      na = trans(r.getTransA(), "transA") == Transpose.N;
      m = nonNegative(r.getM(), "m");
      bands = op == BlasOp.GBMV ? nonNegative(r.getKl(), "kl") + nonNegative(r.getKu(), "ku") + 1 : 0;
    } else {
      present(r.getUplo(), "uplo");
      m = n;
      bands = nonNegative(r.getK(), "k") + 1;
    }
    return Operands.of(r, table, dtypes(op)).read(A, storedA(op, m, n, bands))
      .read(X, vector(na ? n : m)).written(Y, vector(na ? m : n)).call();
  }

  /** TRMV, TRSV and their band and packed forms: x = op(A) x or op(A)^-1 x, A n x n triangular. */
  private static BlasCall triangularVector(BlasRequest r, LibraryContext table) {
    present(r.getUplo(), "uplo");
    present(r.getDiag(), "diag");
    trans(r.getTransA(), "transA");
    int n = nonNegative(r.getN(), "n");
    int bands = nonNegative(r.getK(), "k") + 1;
    return Operands.of(r, table, dtypes(r.getOp())).read(A, storedA(r.getOp(), n, n, bands))
      .written(X, vector(n)).call();
  }

  /** GER, GERC (A m x n), SYR, HER, SPR, HPR (x), SYR2, HER2, SPR2, HPR2 (x and y): A updated in place. */
  private static BlasCall rankUpdate(BlasRequest r, LibraryContext table) {
    BlasOp op = r.getOp();
    int n = nonNegative(r.getN(), "n");
    boolean general = op == BlasOp.GER || op == BlasOp.GERC;
    int m = general ? nonNegative(r.getM(), "m") : n;
    if (!general) {
      present(r.getUplo(), "uplo");
    }
    boolean two = general || op == BlasOp.SYR2 || op == BlasOp.HER2 || op == BlasOp.SPR2 || op == BlasOp.HPR2;
    Operands ops = Operands.of(r, table, dtypes(op)).read(X, vector(m));
    if (two) {
      ops = ops.read(Y, vector(n));
    }
    return ops.written(A, storedA(op, m, n, 0)).like(A).call();
  }

  private static BlasCall level1(BlasRequest r, LibraryContext table) {
    int n = nonNegative(r.getN(), "n");
    Operands ops = Operands.of(r, table, dtypes(r.getOp()));
    switch (r.getOp()) {
      case AXPY:
      case COPY:
        return ops.read(X, vector(n)).written(Y, vector(n)).call();
      case SWAP:
      case ROT:
        return ops.written(X, vector(n)).written(Y, vector(n)).call();
      case DOT:
      case DOTC:
        return ops.read(X, vector(n)).read(Y, vector(n)).call();
      case SCAL:
        return ops.written(X, vector(n)).call();
      default:
        return ops.read(X, vector(n)).call();
    }
  }
}
