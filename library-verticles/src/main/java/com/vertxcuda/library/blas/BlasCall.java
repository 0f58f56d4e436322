package com.vertxcuda.library.blas;

import com.vertxcuda.DType;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasReply;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.blas.Side;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.library.blas.Operands.Shape;
import com.vertxcuda.library.impl.Operand;

import java.util.List;

import static com.vertxcuda.library.blas.Operands.Slot.A;
import static com.vertxcuda.library.blas.Operands.Slot.B;
import static com.vertxcuda.library.blas.Operands.Slot.C;
import static com.vertxcuda.library.blas.Operands.Slot.X;
import static com.vertxcuda.library.blas.Operands.Slot.Y;
import static com.vertxcuda.library.blas.Operands.matrix;
import static com.vertxcuda.library.blas.Operands.stridedMatrices;
import static com.vertxcuda.library.blas.Operands.vector;
import static com.vertxcuda.library.impl.RequestChecks.bad;
import static com.vertxcuda.library.impl.RequestChecks.nonNegative;
import static com.vertxcuda.library.impl.RequestChecks.require;

/**
 * A {@link BlasRequest} that passed every check: handles resolved, shapes, leading dimensions,
 * increments and strides within the buffers, dtypes agreeing, no output overlapping an input.
 * Engines run it without further checks. Each routine declares its operands once on {@code Operands},
 * which runs those checks the same way for all.
 */
public final class BlasCall {

  private static final DType[] REAL = {DType.F32, DType.F64};
  private static final DType[] REAL_OR_COMPLEX = {DType.F32, DType.F64, DType.C64, DType.C128};
  private static final DType[] EX_INPUT = {DType.F16, DType.BF16, DType.F32};

  private final BlasRequest request;
  private final DType dtype;
  // The operands by Slot ordinal, null where the routine has none in that slot.
  private final Operand[] operands;
  // Immutable, built once by the recipe (a batch of small GEMMs validates hundreds of thousands a second).
  private final List<Operand> reads;
  private final List<Operand> writes;
  private final Operand output;

  BlasCall(BlasRequest request, DType dtype, Operand[] operands, List<Operand> reads, List<Operand> writes,
           Operand output) {
    this.request = request;
    this.dtype = dtype;
    this.operands = operands;
    this.reads = reads;
    this.writes = writes;
    this.output = output;
  }

  public BlasRequest request() { return request; }
  public BlasOp op() { return request.getOp(); }
  /** Element type of the computation's output (F32 or F64). */
  public DType dtype() { return dtype; }
  public Operand a() { return operands[A.ordinal()]; }
  public Operand b() { return operands[B.ordinal()]; }
  public Operand c() { return operands[C.ordinal()]; }
  public Operand x() { return operands[X.ordinal()]; }
  public Operand y() { return operands[Y.ordinal()]; }

  public List<Operand> reads() { return reads; }
  public List<Operand> writes() { return writes; }

  /** Whether the routine answers with a scalar computed on the device. */
  public boolean isScalar() {
    switch (op()) {
      case DOT: case NRM2: case ASUM: case IAMAX: case IAMIN: return true;
      default: return false;
    }
  }

  /** The reply, given the scalar result where the routine has one. */
  public BlasReply reply(double scalar) {
    BlasReply r = new BlasReply().setOutput(output == null ? null : output.handle());
    if (op() == BlasOp.IAMAX || op() == BlasOp.IAMIN) {
      r.setIndex((int) scalar);
    } else if (isScalar()) {
      r.setValue(scalar);
    }
    return r;
  }

  /** Validates {@code r} against the buffers of {@code table}'s context; BAD_REQUEST names the field. */
  public static BlasCall of(BlasRequest r, LibraryContext table) {
    if (r.getOp() == null) {
      throw bad("op is missing");
    }
    if (r.getOp() != BlasOp.GEMM && r.getOp() != BlasOp.GEMM_STRIDED_BATCHED) {
      require(r.getAlphaImag() == 0 && r.getBetaImag() == 0, () -> "alphaImag and betaImag apply to complex (C64, C128) "
        + "GEMM and GEMM_STRIDED_BATCHED only, not " + r.getOp());
    }
    switch (r.getOp()) {
      case GEMM:
      case GEMM_STRIDED_BATCHED:
      case GEMM_EX:
        return gemm(r, table);
      case GEMV:
        return gemv(r, table);
      case GER:
        return ger(r, table);
      case GEAM:
        return geam(r, table);
      case SYRK:
        return syrk(r, table);
      case TRSM:
        return trsm(r, table);
      default:
        return level1(r, table);
    }
  }

  private static Transpose trans(Transpose t, String field) {
    Transpose checked = transOrConjugate(t, field);
    require(checked != Transpose.C, () -> field + " C (conjugate transpose) applies to complex (C64, C128) GEMMs only");
    return checked;
  }

  private static Transpose transOrConjugate(Transpose t, String field) {
    if (t == null) {
      throw bad(field + " is missing");
    }
    return t;
  }

  private static <T> T present(T v, String field) {
    if (v == null) {
      throw bad(field + " is missing");
    }
    return v;
  }

  private static BlasCall gemm(BlasRequest r, LibraryContext table) {
    BlasOp op = r.getOp();
    Transpose ta = transOrConjugate(r.getTransA(), "transA");
    Transpose tb = transOrConjugate(r.getTransB(), "transB");
    int m = nonNegative(r.getM(), "m");
    int n = nonNegative(r.getN(), "n");
    int k = nonNegative(r.getK(), "k");
    boolean na = ta == Transpose.N;
    boolean nb = tb == Transpose.N;
    boolean batched = op == BlasOp.GEMM_STRIDED_BATCHED;
    Operands ops = Operands.of(r, table, op == BlasOp.GEMM_EX ? EX_INPUT : REAL_OR_COMPLEX)
      .read(A, batched ? stridedMatrices(na ? m : k, na ? k : m) : matrix(na ? m : k, na ? k : m))
      .read(B, batched ? stridedMatrices(nb ? k : n, nb ? n : k) : matrix(nb ? k : n, nb ? n : k));
    Shape cShape = batched ? stridedMatrices(m, n) : matrix(m, n);
    // GEMM_EX takes F16, BF16 or F32 inputs and always accumulates into F32.
    ops = op == BlasOp.GEMM_EX ? ops.written(C, cShape, DType.F32) : ops.written(C, cShape);
    return ops.call(() -> {
      DType out = r.getC().dtype();
      if (!out.isComplex()) {
        require(r.getAlphaImag() == 0 && r.getBetaImag() == 0, () -> "alphaImag and betaImag apply to complex "
          + "(C64, C128) GEMMs only, c is " + out);
        trans(ta, "transA");
        trans(tb, "transB");
      }
      require(!r.isTf32() || out == DType.F32, () -> "tf32 applies to F32 only, c is " + out);
    });
  }

  private static BlasCall gemv(BlasRequest r, LibraryContext table) {
    boolean na = trans(r.getTransA(), "transA") == Transpose.N;
    int m = nonNegative(r.getM(), "m");
    int n = nonNegative(r.getN(), "n");
    return Operands.of(r, table, REAL)
      .read(A, matrix(m, n)).read(X, vector(na ? n : m)).written(Y, vector(na ? m : n)).call();
  }

  private static BlasCall ger(BlasRequest r, LibraryContext table) {
    int m = nonNegative(r.getM(), "m");
    int n = nonNegative(r.getN(), "n");
    return Operands.of(r, table, REAL)
      .read(X, vector(m)).read(Y, vector(n)).written(A, matrix(m, n)).like(A).call();
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

  private static BlasCall syrk(BlasRequest r, LibraryContext table) {
    present(r.getUplo(), "uplo");
    boolean na = trans(r.getTransA(), "transA") == Transpose.N;
    int n = nonNegative(r.getN(), "n");
    int k = nonNegative(r.getK(), "k");
    return Operands.of(r, table, REAL).read(A, matrix(na ? n : k, na ? k : n)).written(C, matrix(n, n)).call();
  }

  private static BlasCall trsm(BlasRequest r, LibraryContext table) {
    Side side = present(r.getSide(), "side");
    present(r.getUplo(), "uplo");
    present(r.getDiag(), "diag");
    trans(r.getTransA(), "transA");
    int m = nonNegative(r.getM(), "m");
    int n = nonNegative(r.getN(), "n");
    int order = side == Side.LEFT ? m : n;
    return Operands.of(r, table, REAL).read(A, matrix(order, order)).written(B, matrix(m, n)).call();
  }

  private static BlasCall level1(BlasRequest r, LibraryContext table) {
    int n = nonNegative(r.getN(), "n");
    Operands ops = Operands.of(r, table, REAL);
    switch (r.getOp()) {
      case AXPY:
      case COPY:
        return ops.read(X, vector(n)).written(Y, vector(n)).call();
      case SWAP:
      case ROT:
        return ops.written(X, vector(n)).written(Y, vector(n)).call();
      case DOT:
        return ops.read(X, vector(n)).read(Y, vector(n)).call();
      case SCAL:
        return ops.written(X, vector(n)).call();
      default:
        return ops.read(X, vector(n)).call();
    }
  }
}
