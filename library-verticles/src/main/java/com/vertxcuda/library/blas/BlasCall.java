package com.vertxcuda.library.blas;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasReply;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.blas.Side;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.device.spi.DeviceBuffer;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.library.impl.Operand;

import java.util.List;

import static com.vertxcuda.library.impl.RequestChecks.bad;
import static com.vertxcuda.library.impl.RequestChecks.matrix;
import static com.vertxcuda.library.impl.RequestChecks.noOverlap;
import static com.vertxcuda.library.impl.RequestChecks.nonNegative;
import static com.vertxcuda.library.impl.RequestChecks.require;
import static com.vertxcuda.library.impl.RequestChecks.stridedMatrices;
import static com.vertxcuda.library.impl.RequestChecks.vector;

/**
 * A {@link BlasRequest} that passed every check: handles resolved, shapes, leading dimensions,
 * increments and strides within the buffers, dtypes agreeing, no output overlapping an input.
 * Engines run it without further checks.
 */
public final class BlasCall {

  private static final DType[] REAL = {DType.F32, DType.F64};
  private static final DType[] REAL_OR_COMPLEX = {DType.F32, DType.F64, DType.C64, DType.C128};
  private static final DType[] EX_INPUT = {DType.F16, DType.BF16, DType.F32};

  private final BlasRequest request;
  private final DType dtype;
  private Operand a;
  private Operand b;
  private Operand c;
  private Operand x;
  private Operand y;
  // Immutable, set once by the factory (a batch of small GEMMs validates hundreds of thousands a second).
  private List<Operand> reads = List.of();
  private List<Operand> writes = List.of();
  private Operand output;

  private BlasCall(BlasRequest request, DType dtype) {
    this.request = request;
    this.dtype = dtype;
  }

  public BlasRequest request() { return request; }
  public BlasOp op() { return request.getOp(); }
  /** Element type of the computation's output (F32 or F64). */
  public DType dtype() { return dtype; }
  public Operand a() { return a; }
  public Operand b() { return b; }
  public Operand c() { return c; }
  public Operand x() { return x; }
  public Operand y() { return y; }

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

  private static DeviceBuffer resolve(LibraryContext table, BufferHandle h, String field, DType... dtypes) {
    return table.resolve(h, field, dtypes);
  }

  private static void sameDtype(BufferHandle h, String field, DType expected, String reference) {
    require(h.dtype() == expected, () -> field + " has dtype " + h.dtype() + " but " + reference + " is " + expected);
  }

  private static BlasCall gemm(BlasRequest r, LibraryContext table) {
    BlasOp op = r.getOp();
    Transpose ta = transOrConjugate(r.getTransA(), "transA");
    Transpose tb = transOrConjugate(r.getTransB(), "transB");
    int m = nonNegative(r.getM(), "m");
    int n = nonNegative(r.getN(), "n");
    int k = nonNegative(r.getK(), "k");
    DeviceBuffer aa;
    DeviceBuffer ba;
    DeviceBuffer ca;
    if (op == BlasOp.GEMM_EX) {
      aa = resolve(table, r.getA(), "a", EX_INPUT);
      ba = resolve(table, r.getB(), "b", EX_INPUT);
      sameDtype(r.getB(), "b", r.getA().dtype(), "a");
      ca = resolve(table, r.getC(), "c", DType.F32);
    } else {
      aa = resolve(table, r.getA(), "a", REAL_OR_COMPLEX);
      ba = resolve(table, r.getB(), "b", REAL_OR_COMPLEX);
      ca = resolve(table, r.getC(), "c", REAL_OR_COMPLEX);
      sameDtype(r.getB(), "b", r.getA().dtype(), "a");
      sameDtype(r.getC(), "c", r.getA().dtype(), "a");
    }
    DType out = r.getC().dtype();
    if (!out.isComplex()) {
      require(r.getAlphaImag() == 0 && r.getBetaImag() == 0, () -> "alphaImag and betaImag apply to complex (C64, C128) "
        + "GEMMs only, c is " + out);
      trans(ta, "transA");
      trans(tb, "transB");
    }
    require(!r.isTf32() || out == DType.F32, () -> "tf32 applies to F32 only, c is " + out);
    int aRows = ta == Transpose.N ? m : k;
    int aCols = ta == Transpose.N ? k : m;
    int bRows = tb == Transpose.N ? k : n;
    int bCols = tb == Transpose.N ? n : k;
    BlasCall call = new BlasCall(r, out);
    if (op == BlasOp.GEMM_STRIDED_BATCHED) {
      int batch = nonNegative(r.getBatchCount(), "batchCount");
      call.a = new Operand(aa, r.getA(), stridedMatrices(r.getA(), "a", aRows, aCols, r.getLda(), "lda",
        r.getStrideA(), "strideA", batch));
      call.b = new Operand(ba, r.getB(), stridedMatrices(r.getB(), "b", bRows, bCols, r.getLdb(), "ldb",
        r.getStrideB(), "strideB", batch));
      call.c = new Operand(ca, r.getC(), stridedMatrices(r.getC(), "c", m, n, r.getLdc(), "ldc",
        r.getStrideC(), "strideC", batch));
      require(batch <= 1 || r.getStrideC() >= (long) r.getLdc() * Math.max(n - 1, 0) + m,
        () -> "strideC " + r.getStrideC() + " makes the " + batch + " C matrices overlap");
    } else {
      call.a = new Operand(aa, r.getA(), matrix(r.getA(), "a", aRows, aCols, r.getLda(), "lda"));
      call.b = new Operand(ba, r.getB(), matrix(r.getB(), "b", bRows, bCols, r.getLdb(), "ldb"));
      call.c = new Operand(ca, r.getC(), matrix(r.getC(), "c", m, n, r.getLdc(), "ldc"));
    }
    noOverlap(call.c, "c", call.a, "a");
    noOverlap(call.c, "c", call.b, "b");
    call.reads = List.of(call.a, call.b);
    call.writes = List.of(call.c);
    call.output = call.c;
    return call;
  }

  private static BlasCall gemv(BlasRequest r, LibraryContext table) {
    Transpose ta = trans(r.getTransA(), "transA");
    int m = nonNegative(r.getM(), "m");
    int n = nonNegative(r.getN(), "n");
    DeviceBuffer aa = resolve(table, r.getA(), "a", REAL);
    DeviceBuffer xa = resolve(table, r.getX(), "x", REAL);
    DeviceBuffer ya = resolve(table, r.getY(), "y", REAL);
    DType t = r.getA().dtype();
    sameDtype(r.getX(), "x", t, "a");
    sameDtype(r.getY(), "y", t, "a");
    BlasCall call = new BlasCall(r, t);
    call.a = new Operand(aa, r.getA(), matrix(r.getA(), "a", m, n, r.getLda(), "lda"));
    int xLen = ta == Transpose.N ? n : m;
    int yLen = ta == Transpose.N ? m : n;
    call.x = new Operand(xa, r.getX(), vector(r.getX(), "x", xLen, r.getIncx(), "incx"));
    call.y = new Operand(ya, r.getY(), vector(r.getY(), "y", yLen, r.getIncy(), "incy"));
    noOverlap(call.y, "y", call.a, "a");
    noOverlap(call.y, "y", call.x, "x");
    call.reads = List.of(call.a, call.x);
    call.writes = List.of(call.y);
    call.output = call.y;
    return call;
  }

  private static BlasCall ger(BlasRequest r, LibraryContext table) {
    int m = nonNegative(r.getM(), "m");
    int n = nonNegative(r.getN(), "n");
    DeviceBuffer xa = resolve(table, r.getX(), "x", REAL);
    DeviceBuffer ya = resolve(table, r.getY(), "y", REAL);
    DeviceBuffer aa = resolve(table, r.getA(), "a", REAL);
    DType t = r.getA().dtype();
    sameDtype(r.getX(), "x", t, "a");
    sameDtype(r.getY(), "y", t, "a");
    BlasCall call = new BlasCall(r, t);
    call.x = new Operand(xa, r.getX(), vector(r.getX(), "x", m, r.getIncx(), "incx"));
    call.y = new Operand(ya, r.getY(), vector(r.getY(), "y", n, r.getIncy(), "incy"));
    call.a = new Operand(aa, r.getA(), matrix(r.getA(), "a", m, n, r.getLda(), "lda"));
    noOverlap(call.a, "a", call.x, "x");
    noOverlap(call.a, "a", call.y, "y");
    call.reads = List.of(call.x, call.y);
    call.writes = List.of(call.a);
    call.output = call.a;
    return call;
  }

  private static BlasCall geam(BlasRequest r, LibraryContext table) {
    Transpose ta = trans(r.getTransA(), "transA");
    Transpose tb = trans(r.getTransB(), "transB");
    int m = nonNegative(r.getM(), "m");
    int n = nonNegative(r.getN(), "n");
    DeviceBuffer aa = resolve(table, r.getA(), "a", REAL);
    DeviceBuffer ba = resolve(table, r.getB(), "b", REAL);
    DeviceBuffer ca = resolve(table, r.getC(), "c", REAL);
    DType t = r.getA().dtype();
    sameDtype(r.getB(), "b", t, "a");
    sameDtype(r.getC(), "c", t, "a");
    BlasCall call = new BlasCall(r, t);
    call.a = new Operand(aa, r.getA(), matrix(r.getA(), "a", ta == Transpose.N ? m : n, ta == Transpose.N ? n : m,
      r.getLda(), "lda"));
    call.b = new Operand(ba, r.getB(), matrix(r.getB(), "b", tb == Transpose.N ? m : n, tb == Transpose.N ? n : m,
      r.getLdb(), "ldb"));
    call.c = new Operand(ca, r.getC(), matrix(r.getC(), "c", m, n, r.getLdc(), "ldc"));
    // cuBLAS computes in place when C is A (or B) untransposed with the same leading dimension.
    if (!inPlace(call.c, call.a, ta, r.getLda(), r.getLdc())) {
      noOverlap(call.c, "c", call.a, "a");
    }
    if (!inPlace(call.c, call.b, tb, r.getLdb(), r.getLdc())) {
      noOverlap(call.c, "c", call.b, "b");
    }
    call.reads = List.of(call.a, call.b);
    call.writes = List.of(call.c);
    call.output = call.c;
    return call;
  }

  private static boolean inPlace(Operand c, Operand in, Transpose t, int ld, int ldc) {
    return c.buffer() == in.buffer() && c.handle().offset() == in.handle().offset()
      && t == Transpose.N && ld == ldc;
  }

  private static BlasCall syrk(BlasRequest r, LibraryContext table) {
    present(r.getUplo(), "uplo");
    Transpose ta = trans(r.getTransA(), "transA");
    int n = nonNegative(r.getN(), "n");
    int k = nonNegative(r.getK(), "k");
    DeviceBuffer aa = resolve(table, r.getA(), "a", REAL);
    DeviceBuffer ca = resolve(table, r.getC(), "c", REAL);
    DType t = r.getA().dtype();
    sameDtype(r.getC(), "c", t, "a");
    BlasCall call = new BlasCall(r, t);
    call.a = new Operand(aa, r.getA(), matrix(r.getA(), "a", ta == Transpose.N ? n : k, ta == Transpose.N ? k : n,
      r.getLda(), "lda"));
    call.c = new Operand(ca, r.getC(), matrix(r.getC(), "c", n, n, r.getLdc(), "ldc"));
    noOverlap(call.c, "c", call.a, "a");
    call.reads = List.of(call.a);
    call.writes = List.of(call.c);
    call.output = call.c;
    return call;
  }

  private static BlasCall trsm(BlasRequest r, LibraryContext table) {
    Side side = present(r.getSide(), "side");
    present(r.getUplo(), "uplo");
    present(r.getDiag(), "diag");
    trans(r.getTransA(), "transA");
    int m = nonNegative(r.getM(), "m");
    int n = nonNegative(r.getN(), "n");
    DeviceBuffer aa = resolve(table, r.getA(), "a", REAL);
    DeviceBuffer ba = resolve(table, r.getB(), "b", REAL);
    DType t = r.getA().dtype();
    sameDtype(r.getB(), "b", t, "a");
    int order = side == Side.LEFT ? m : n;
    BlasCall call = new BlasCall(r, t);
    call.a = new Operand(aa, r.getA(), matrix(r.getA(), "a", order, order, r.getLda(), "lda"));
    call.b = new Operand(ba, r.getB(), matrix(r.getB(), "b", m, n, r.getLdb(), "ldb"));
    noOverlap(call.b, "b", call.a, "a");
    call.reads = List.of(call.a);
    call.writes = List.of(call.b);
    call.output = call.b;
    return call;
  }

  private static BlasCall level1(BlasRequest r, LibraryContext table) {
    BlasOp op = r.getOp();
    int n = nonNegative(r.getN(), "n");
    DeviceBuffer xa = resolve(table, r.getX(), "x", REAL);
    DType t = r.getX().dtype();
    BlasCall call = new BlasCall(r, t);
    call.x = new Operand(xa, r.getX(), vector(r.getX(), "x", n, r.getIncx(), "incx"));
    boolean twoVectors = op == BlasOp.AXPY || op == BlasOp.DOT || op == BlasOp.COPY || op == BlasOp.SWAP
      || op == BlasOp.ROT;
    if (twoVectors) {
      DeviceBuffer ya = resolve(table, r.getY(), "y", REAL);
      sameDtype(r.getY(), "y", t, "x");
      call.y = new Operand(ya, r.getY(), vector(r.getY(), "y", n, r.getIncy(), "incy"));
    }
    switch (op) {
      case AXPY:
      case COPY:
        noOverlap(call.y, "y", call.x, "x");
        call.reads = List.of(call.x);
        call.writes = List.of(call.y);
        call.output = call.y;
        break;
      case SWAP:
      case ROT:
        noOverlap(call.y, "y", call.x, "x");
        call.writes = List.of(call.x, call.y);
        break;
      case DOT:
        call.reads = List.of(call.x, call.y);
        break;
      case SCAL:
        call.writes = List.of(call.x);
        call.output = call.x;
        break;
      default:
        call.reads = List.of(call.x);
    }
    return call;
  }
}
