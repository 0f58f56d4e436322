package com.vertxcuda.library.blas;

import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;
import com.vertxcuda.blas.BlasComputeType;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.blas.Diagonal;
import com.vertxcuda.blas.FillMode;
import com.vertxcuda.blas.Side;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.DeviceMemory;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.library.impl.CudaPointers;
import com.vertxcuda.library.impl.CudaStatus;
import com.vertxcuda.library.impl.EngineResult;
import com.vertxcuda.library.impl.Operand;
import jcuda.Pointer;
import jcuda.cudaDataType;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasDiagType;
import jcuda.jcublas.cublasFillMode;
import jcuda.jcublas.cublasGemmAlgo;
import jcuda.jcublas.cublasHandle;
import jcuda.jcublas.cublasMath;
import jcuda.jcublas.cublasOperation;
import jcuda.jcublas.cublasPointerMode;
import jcuda.jcublas.cublasSideMode;
import jcuda.runtime.cudaStream_t;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.List;
import java.util.function.IntToLongFunction;

/**
 * cuBLAS through JCublas2: one handle, bound to the library's stream. alpha and beta go in host
 * pointer mode (read when the call is queued); scalar results go in device pointer mode into a
 * device slot, then an async copy into pinned memory, read once the reply's event is reached, so
 * no call blocks the thread (but a batched launch that fails once its pointer arrays are on their
 * way, which waits for its stream: see {@link #enqueueGemmBatch}). Batches of same-shaped GEMMs
 * become one {@code cublas<t>gemmBatched} whose pointer arrays are staged in pinned memory and
 * copied to the device on the stream, each batch's arrays in a ring ({@link #BATCH_STAGING} bytes,
 * each side)
 * that it holds until the event recorded after it is reached. The ring holds hundreds of groups of 64
 * GEMMs in flight, so a coalesced stream of large batches per message never runs past it (past it, a
 * group falls back to one launch per GEMM).
 */
public final class CudaBlasEngine implements BlasEngine {

  private static final int SCALAR_SLOTS = 1024;
  /** Bytes of one scalar result slot: room for a complex double (ZDOTU, ZDOTC). */
  private static final long SLOT_BYTES = 16;
  private static final int BATCH_CAPACITY = 512;
  /** Bytes of pointer arrays (pinned, and on the device) that batched calls in flight may hold. */
  static final long BATCH_STAGING = 1 << 20;

  private final DeviceContext device;
  private final CudaPointers pointers;
  private final CUstream cuStream;
  private final cublasHandle handle = new cublasHandle();
  /** The handle's math mode: TF32 tensor ops, or cuBLAS's default (as created). */
  private boolean tf32Math;
  private final DeviceMemory scalarDevice;
  private final Pointer scalarHost = new Pointer();
  private final ArrayDeque<Integer> freeSlots = new ArrayDeque<>();
  private final DeviceMemory batchDevice;
  private final Pointer batchHost = new Pointer();
  private final StagingRing staging = new StagingRing(BATCH_STAGING);

  public CudaBlasEngine(DeviceContext device, CudaPointers pointers, GpuStream stream) throws BackendException {
    this.device = device;
    this.pointers = pointers;
    this.cuStream = pointers.stream(stream);
    JCublas2.setExceptionsEnabled(false);
    CudaStatus.CUBLAS.check(JCublas2.cublasCreate(handle), "cublasCreate");
    CudaStatus.CUBLAS.check(JCublas2.cublasSetStream(handle, new cudaStream_t(cuStream)), "cublasSetStream");
    scalarDevice = device.allocate(SCALAR_SLOTS * SLOT_BYTES);
    CudaStatus.checkDriver(JCudaDriver.cuMemAllocHost(scalarHost, SCALAR_SLOTS * SLOT_BYTES), "cuMemAllocHost");
    batchDevice = device.allocate(BATCH_STAGING);
    CudaStatus.checkDriver(JCudaDriver.cuMemAllocHost(batchHost, BATCH_STAGING), "cuMemAllocHost");
    for (int i = 0; i < SCALAR_SLOTS; i++) {
      freeSlots.add(i);
    }
  }

  @Override
  public void close(boolean poisoned) {
    staging.clear();
    if (poisoned) {
      return;
    }
    JCublas2.cublasDestroy(handle);
    JCudaDriver.cuMemFreeHost(scalarHost);
    JCudaDriver.cuMemFreeHost(batchHost);
    try {
      device.release(scalarDevice);
      device.release(batchDevice);
    } catch (BackendException ignored) {
      // the context is closing with everything it holds
    }
  }

  private CUdeviceptr ptr(Operand o) {
    return pointers.pointer(o.memory(), o.byteOffset());
  }

  private long address(Operand o) {
    return pointers.address(o.memory(), o.byteOffset());
  }

  private static CUdeviceptr at(CUdeviceptr base, long elements, DType t) {
    return base.withByteOffset(t.bytes(elements));
  }

  private static int op(Transpose t) {
    return t == Transpose.T ? cublasOperation.CUBLAS_OP_T
      : t == Transpose.C ? cublasOperation.CUBLAS_OP_C : cublasOperation.CUBLAS_OP_N;
  }

  private static Pointer scalar(DType t, double v) {
    return scalar(t, v, 0);
  }

  /**
   * A host scalar of {@code t}: cuComplex / cuDoubleComplex (real, imaginary) for C64 / C128. cuBLAS
   * reads a host cuDoubleComplex as one 16-byte value and faults on one that is not 16-byte aligned,
   * which a Java array's elements need not be (they are 8-byte aligned): C128 scalars are written into
   * an aligned slot of {@link #COMPLEX_DOUBLES} instead.
   */
  private static Pointer scalar(DType t, double re, double im) {
    switch (t) {
      case F64: return Pointer.to(new double[] {re});
      case C64: return Pointer.to(new float[] {(float) re, (float) im});
      case C128: return COMPLEX_DOUBLES.get().next(re, im);
      default: return Pointer.to(new float[] {(float) re});
    }
  }

  /**
   * Each thread's 16-byte aligned cuDoubleComplex slots, taken in turn: cuBLAS reads host scalars
   * before its call returns, and no call takes more than {@link ComplexDoubles#SLOTS} of them, so a
   * slot is free again by the time the turn comes back to it.
   */
  private static final ThreadLocal<ComplexDoubles> COMPLEX_DOUBLES = ThreadLocal.withInitial(ComplexDoubles::new);

  private static final class ComplexDoubles {
    static final int SLOTS = 8;
    final java.nio.ByteBuffer[] slots = new java.nio.ByteBuffer[SLOTS];
    final Pointer[] pointers = new Pointer[SLOTS];
    int next;

    ComplexDoubles() {
      java.nio.ByteBuffer all = java.nio.ByteBuffer.allocateDirect(SLOTS * 16 + 16).alignedSlice(16)
        .order(java.nio.ByteOrder.nativeOrder());
      for (int i = 0; i < SLOTS; i++) {
        slots[i] = all.slice(i * 16, 16).order(java.nio.ByteOrder.nativeOrder());
        pointers[i] = Pointer.to(slots[i]);
      }
    }

    Pointer next(double re, double im) {
      int i = next;
      next = (i + 1) % SLOTS;
      slots[i].putDouble(0, re).putDouble(8, im);
      return pointers[i];
    }
  }

  private static void check(int status, String call) throws BackendException {
    CudaStatus.CUBLAS.check(status, call);
  }

  // The JCublas2 signatures shared by a routine's S, D, C and Z forms (and its Hermitian twin), so
  // that each routine is written once and its form picked by dtype.
  @FunctionalInterface private interface Gemv { int call(cublasHandle h, int t, int m, int n, Pointer al, Pointer a, int lda, Pointer x, int incx, Pointer be, Pointer y, int incy); }
  @FunctionalInterface private interface Gbmv { int call(cublasHandle h, int t, int m, int n, int kl, int ku, Pointer al, Pointer a, int lda, Pointer x, int incx, Pointer be, Pointer y, int incy); }
  @FunctionalInterface private interface Symv { int call(cublasHandle h, int u, int n, Pointer al, Pointer a, int lda, Pointer x, int incx, Pointer be, Pointer y, int incy); }
  @FunctionalInterface private interface Sbmv { int call(cublasHandle h, int u, int n, int k, Pointer al, Pointer a, int lda, Pointer x, int incx, Pointer be, Pointer y, int incy); }
  @FunctionalInterface private interface Spmv { int call(cublasHandle h, int u, int n, Pointer al, Pointer ap, Pointer x, int incx, Pointer be, Pointer y, int incy); }
  @FunctionalInterface private interface Ger { int call(cublasHandle h, int m, int n, Pointer al, Pointer x, int incx, Pointer y, int incy, Pointer a, int lda); }
  @FunctionalInterface private interface Syr { int call(cublasHandle h, int u, int n, Pointer al, Pointer x, int incx, Pointer a, int lda); }
  @FunctionalInterface private interface Spr { int call(cublasHandle h, int u, int n, Pointer al, Pointer x, int incx, Pointer ap); }
  @FunctionalInterface private interface Syr2 { int call(cublasHandle h, int u, int n, Pointer al, Pointer x, int incx, Pointer y, int incy, Pointer a, int lda); }
  @FunctionalInterface private interface Spr2 { int call(cublasHandle h, int u, int n, Pointer al, Pointer x, int incx, Pointer y, int incy, Pointer ap); }
  @FunctionalInterface private interface Trmv { int call(cublasHandle h, int u, int t, int d, int n, Pointer a, int lda, Pointer x, int incx); }
  @FunctionalInterface private interface Tbmv { int call(cublasHandle h, int u, int t, int d, int n, int k, Pointer a, int lda, Pointer x, int incx); }
  @FunctionalInterface private interface Tpmv { int call(cublasHandle h, int u, int t, int d, int n, Pointer ap, Pointer x, int incx); }
  @FunctionalInterface private interface Symm { int call(cublasHandle h, int s, int u, int m, int n, Pointer al, Pointer a, int lda, Pointer b, int ldb, Pointer be, Pointer c, int ldc); }
  @FunctionalInterface private interface Syrk { int call(cublasHandle h, int u, int t, int n, int k, Pointer al, Pointer a, int lda, Pointer be, Pointer c, int ldc); }
  @FunctionalInterface private interface Syr2k { int call(cublasHandle h, int u, int t, int n, int k, Pointer al, Pointer a, int lda, Pointer b, int ldb, Pointer be, Pointer c, int ldc); }
  @FunctionalInterface private interface Trmm { int call(cublasHandle h, int s, int u, int t, int d, int m, int n, Pointer al, Pointer a, int lda, Pointer b, int ldb, Pointer c, int ldc); }
  @FunctionalInterface private interface Trsm { int call(cublasHandle h, int s, int u, int t, int d, int m, int n, Pointer al, Pointer a, int lda, Pointer b, int ldb); }
  @FunctionalInterface private interface Axpy { int call(cublasHandle h, int n, Pointer al, Pointer x, int incx, Pointer y, int incy); }
  @FunctionalInterface private interface Pair { int call(cublasHandle h, int n, Pointer x, int incx, Pointer y, int incy); }
  @FunctionalInterface private interface Scal { int call(cublasHandle h, int n, Pointer al, Pointer x, int incx); }
  @FunctionalInterface private interface Rot { int call(cublasHandle h, int n, Pointer x, int incx, Pointer y, int incy, Pointer c, Pointer s); }
  @FunctionalInterface private interface Dot { int call(cublasHandle h, int n, Pointer x, int incx, Pointer y, int incy, Pointer result); }
  @FunctionalInterface private interface Reduce { int call(cublasHandle h, int n, Pointer x, int incx, Pointer result); }

  /** The S, D, C or Z form of a routine for {@code t}; null where cuBLAS has none (the recipe refused those). */
  private static <F> F pick(DType t, F s, F d, F c, F z) {
    switch (t) {
      case F64: return d;
      case C64: return c;
      case C128: return z;
      default: return s;
    }
  }

  private static int uplo(FillMode u) {
    return u == FillMode.UPPER ? cublasFillMode.CUBLAS_FILL_MODE_UPPER : cublasFillMode.CUBLAS_FILL_MODE_LOWER;
  }

  private static int side(Side s) {
    return s == Side.LEFT ? cublasSideMode.CUBLAS_SIDE_LEFT : cublasSideMode.CUBLAS_SIDE_RIGHT;
  }

  private static int diag(Diagonal d) {
    return d == Diagonal.UNIT ? cublasDiagType.CUBLAS_DIAG_UNIT : cublasDiagType.CUBLAS_DIAG_NON_UNIT;
  }

  @Override
  public EngineResult enqueue(GpuStream stream, BlasCall call) throws BackendException {
    return enqueue(stream, call, false);
  }

  @Override
  public EngineResult enqueueRecorded(GpuStream stream, BlasCall call) throws BackendException {
    return enqueue(stream, call, true);
  }

  // unstaged: a step of a recorded pipeline, captured once and replayed: nothing may be staged from host memory.
  private EngineResult enqueue(GpuStream stream, BlasCall call, boolean unstaged) throws BackendException {
    math(call);
    if (call.isScalar()) {
      return scalarCall(call);
    }
    BlasRequest r = call.request();
    DType t = call.dtype();
    boolean d = t == DType.F64;
    Pointer alpha = scalar(t, r.getAlpha(), r.getAlphaImag());
    Pointer beta = scalar(t, r.getBeta(), r.getBetaImag());
    // HER, HPR and HERK take a real alpha, HERK and HER2K a real beta (the component's type).
    Pointer realAlpha = scalar(t.component(), r.getAlpha());
    Pointer realBeta = scalar(t.component(), r.getBeta());
    int n = r.getN();
    int m = r.getM();
    int k = r.getK();
    switch (call.op()) {
      case GEMM:
        gemm(call, ptr(call.a()), ptr(call.b()), ptr(call.c()));
        break;
      case GEMM_STRIDED_BATCHED:
        if (t.isComplex()) {
          check(t == DType.C128
            ? JCublas2.cublasZgemmStridedBatched(handle, op(r.getTransA()), op(r.getTransB()), m, n, k, alpha,
              ptr(call.a()), r.getLda(), r.getStrideA(), ptr(call.b()), r.getLdb(), r.getStrideB(),
              beta, ptr(call.c()), r.getLdc(), r.getStrideC(), r.getBatchCount())
            : JCublas2.cublasCgemmStridedBatched(handle, op(r.getTransA()), op(r.getTransB()), m, n, k, alpha,
              ptr(call.a()), r.getLda(), r.getStrideA(), ptr(call.b()), r.getLdb(), r.getStrideB(),
              beta, ptr(call.c()), r.getLdc(), r.getStrideC(), r.getBatchCount()), "cublasGemmStridedBatched");
          break;
        }
        check(d
          ? JCublas2.cublasDgemmStridedBatched(handle, op(r.getTransA()), op(r.getTransB()), m, n, k, alpha,
            ptr(call.a()), r.getLda(), r.getStrideA(), ptr(call.b()), r.getLdb(), r.getStrideB(),
            beta, ptr(call.c()), r.getLdc(), r.getStrideC(), r.getBatchCount())
          : JCublas2.cublasSgemmStridedBatched(handle, op(r.getTransA()), op(r.getTransB()), m, n, k, alpha,
            ptr(call.a()), r.getLda(), r.getStrideA(), ptr(call.b()), r.getLdb(), r.getStrideB(),
            beta, ptr(call.c()), r.getLdc(), r.getStrideC(), r.getBatchCount()), "cublasGemmStridedBatched");
        break;
      case GEMM_EX:
        gemmEx(call, ptr(call.a()), ptr(call.b()), ptr(call.c()));
        break;
      case GEMM_STRIDED_BATCHED_EX: {
        Ex ex = ex(call);
        check(JCublas2.cublasGemmStridedBatchedEx(handle, op(r.getTransA()), op(r.getTransB()), m, n, k, ex.alpha,
          ptr(call.a()), ex.in, r.getLda(), r.getStrideA(), ptr(call.b()), ex.in, r.getLdb(), r.getStrideB(), ex.beta,
          ptr(call.c()), ex.out, r.getLdc(), r.getStrideC(), r.getBatchCount(), ex.compute,
          cublasGemmAlgo.CUBLAS_GEMM_DEFAULT), "cublasGemmStridedBatchedEx");
        break;
      }
      case GEMM_BATCHED_EX:
        gemmBatchedEx(stream, call, unstaged);
        break;
      case GEMV:
        check(pick(t, (Gemv) JCublas2::cublasSgemv, JCublas2::cublasDgemv, JCublas2::cublasCgemv, JCublas2::cublasZgemv)
          .call(handle, op(r.getTransA()), m, n, alpha, ptr(call.a()), r.getLda(), ptr(call.x()), r.getIncx(), beta,
            ptr(call.y()), r.getIncy()), "cublasGemv");
        break;
      case GBMV:
        check(pick(t, (Gbmv) JCublas2::cublasSgbmv, JCublas2::cublasDgbmv, JCublas2::cublasCgbmv, JCublas2::cublasZgbmv)
          .call(handle, op(r.getTransA()), m, n, r.getKl(), r.getKu(), alpha, ptr(call.a()), r.getLda(), ptr(call.x()),
            r.getIncx(), beta, ptr(call.y()), r.getIncy()), "cublasGbmv");
        break;
      case SYMV:
      case HEMV: {
        Symv f = call.op() == BlasOp.HEMV
          ? pick(t, null, null, (Symv) JCublas2::cublasChemv, JCublas2::cublasZhemv)
          : pick(t, (Symv) JCublas2::cublasSsymv, JCublas2::cublasDsymv, JCublas2::cublasCsymv, JCublas2::cublasZsymv);
        check(f.call(handle, uplo(r.getUplo()), n, alpha, ptr(call.a()), r.getLda(), ptr(call.x()), r.getIncx(), beta,
          ptr(call.y()), r.getIncy()), "cublas" + call.op());
        break;
      }
      case SBMV:
      case HBMV: {
        Sbmv f = call.op() == BlasOp.HBMV
          ? pick(t, null, null, (Sbmv) JCublas2::cublasChbmv, JCublas2::cublasZhbmv)
          : pick(t, (Sbmv) JCublas2::cublasSsbmv, JCublas2::cublasDsbmv, null, null);
        check(f.call(handle, uplo(r.getUplo()), n, k, alpha, ptr(call.a()), r.getLda(), ptr(call.x()), r.getIncx(),
          beta, ptr(call.y()), r.getIncy()), "cublas" + call.op());
        break;
      }
      case SPMV:
      case HPMV: {
        Spmv f = call.op() == BlasOp.HPMV
          ? pick(t, null, null, (Spmv) JCublas2::cublasChpmv, JCublas2::cublasZhpmv)
          : pick(t, (Spmv) JCublas2::cublasSspmv, JCublas2::cublasDspmv, null, null);
        check(f.call(handle, uplo(r.getUplo()), n, alpha, ptr(call.a()), ptr(call.x()), r.getIncx(), beta,
          ptr(call.y()), r.getIncy()), "cublas" + call.op());
        break;
      }
      case GER:
      case GERC: {
        Ger f = call.op() == BlasOp.GERC
          ? pick(t, null, null, (Ger) JCublas2::cublasCgerc, JCublas2::cublasZgerc)
          : pick(t, (Ger) JCublas2::cublasSger, JCublas2::cublasDger, JCublas2::cublasCgeru, JCublas2::cublasZgeru);
        check(f.call(handle, m, n, alpha, ptr(call.x()), r.getIncx(), ptr(call.y()), r.getIncy(), ptr(call.a()),
          r.getLda()), "cublas" + call.op());
        break;
      }
      case SYR:
      case HER: {
        boolean her = call.op() == BlasOp.HER;
        Syr f = her ? pick(t, null, null, (Syr) JCublas2::cublasCher, JCublas2::cublasZher)
          : pick(t, (Syr) JCublas2::cublasSsyr, JCublas2::cublasDsyr, JCublas2::cublasCsyr, JCublas2::cublasZsyr);
        check(f.call(handle, uplo(r.getUplo()), n, her ? realAlpha : alpha, ptr(call.x()), r.getIncx(), ptr(call.a()),
          r.getLda()), "cublas" + call.op());
        break;
      }
      case SPR:
      case HPR: {
        boolean hpr = call.op() == BlasOp.HPR;
        Spr f = hpr ? pick(t, null, null, (Spr) JCublas2::cublasChpr, JCublas2::cublasZhpr)
          : pick(t, (Spr) JCublas2::cublasSspr, JCublas2::cublasDspr, null, null);
        check(f.call(handle, uplo(r.getUplo()), n, hpr ? realAlpha : alpha, ptr(call.x()), r.getIncx(), ptr(call.a())),
          "cublas" + call.op());
        break;
      }
      case SYR2:
      case HER2: {
        Syr2 f = call.op() == BlasOp.HER2
          ? pick(t, null, null, (Syr2) JCublas2::cublasCher2, JCublas2::cublasZher2)
          : pick(t, (Syr2) JCublas2::cublasSsyr2, JCublas2::cublasDsyr2, JCublas2::cublasCsyr2, JCublas2::cublasZsyr2);
        check(f.call(handle, uplo(r.getUplo()), n, alpha, ptr(call.x()), r.getIncx(), ptr(call.y()), r.getIncy(),
          ptr(call.a()), r.getLda()), "cublas" + call.op());
        break;
      }
      case SPR2:
      case HPR2: {
        Spr2 f = call.op() == BlasOp.HPR2
          ? pick(t, null, null, (Spr2) JCublas2::cublasChpr2, JCublas2::cublasZhpr2)
          : pick(t, (Spr2) JCublas2::cublasSspr2, JCublas2::cublasDspr2, null, null);
        check(f.call(handle, uplo(r.getUplo()), n, alpha, ptr(call.x()), r.getIncx(), ptr(call.y()), r.getIncy(),
          ptr(call.a())), "cublas" + call.op());
        break;
      }
      case TRMV:
      case TRSV: {
        Trmv f = call.op() == BlasOp.TRMV
          ? pick(t, (Trmv) JCublas2::cublasStrmv, JCublas2::cublasDtrmv, JCublas2::cublasCtrmv, JCublas2::cublasZtrmv)
          : pick(t, (Trmv) JCublas2::cublasStrsv, JCublas2::cublasDtrsv, JCublas2::cublasCtrsv, JCublas2::cublasZtrsv);
        check(f.call(handle, uplo(r.getUplo()), op(r.getTransA()), diag(r.getDiag()), n, ptr(call.a()), r.getLda(),
          ptr(call.x()), r.getIncx()), "cublas" + call.op());
        break;
      }
      case TBMV:
      case TBSV: {
        Tbmv f = call.op() == BlasOp.TBMV
          ? pick(t, (Tbmv) JCublas2::cublasStbmv, JCublas2::cublasDtbmv, JCublas2::cublasCtbmv, JCublas2::cublasZtbmv)
          : pick(t, (Tbmv) JCublas2::cublasStbsv, JCublas2::cublasDtbsv, JCublas2::cublasCtbsv, JCublas2::cublasZtbsv);
        check(f.call(handle, uplo(r.getUplo()), op(r.getTransA()), diag(r.getDiag()), n, k, ptr(call.a()), r.getLda(),
          ptr(call.x()), r.getIncx()), "cublas" + call.op());
        break;
      }
      case TPMV:
      case TPSV: {
        Tpmv f = call.op() == BlasOp.TPMV
          ? pick(t, (Tpmv) JCublas2::cublasStpmv, JCublas2::cublasDtpmv, JCublas2::cublasCtpmv, JCublas2::cublasZtpmv)
          : pick(t, (Tpmv) JCublas2::cublasStpsv, JCublas2::cublasDtpsv, JCublas2::cublasCtpsv, JCublas2::cublasZtpsv);
        check(f.call(handle, uplo(r.getUplo()), op(r.getTransA()), diag(r.getDiag()), n, ptr(call.a()), ptr(call.x()),
          r.getIncx()), "cublas" + call.op());
        break;
      }
      case GEAM:
        check(d ? JCublas2.cublasDgeam(handle, op(r.getTransA()), op(r.getTransB()), m, n, alpha,
            ptr(call.a()), r.getLda(), beta, ptr(call.b()), r.getLdb(), ptr(call.c()), r.getLdc())
          : JCublas2.cublasSgeam(handle, op(r.getTransA()), op(r.getTransB()), m, n, alpha,
            ptr(call.a()), r.getLda(), beta, ptr(call.b()), r.getLdb(), ptr(call.c()), r.getLdc()), "cublasGeam");
        break;
      case SYMM:
      case HEMM: {
        Symm f = call.op() == BlasOp.HEMM
          ? pick(t, null, null, (Symm) JCublas2::cublasChemm, JCublas2::cublasZhemm)
          : pick(t, (Symm) JCublas2::cublasSsymm, JCublas2::cublasDsymm, JCublas2::cublasCsymm, JCublas2::cublasZsymm);
        check(f.call(handle, side(r.getSide()), uplo(r.getUplo()), m, n, alpha, ptr(call.a()), r.getLda(),
          ptr(call.b()), r.getLdb(), beta, ptr(call.c()), r.getLdc()), "cublas" + call.op());
        break;
      }
      case SYRK:
      case HERK: {
        boolean herk = call.op() == BlasOp.HERK;
        Syrk f = herk ? pick(t, null, null, (Syrk) JCublas2::cublasCherk, JCublas2::cublasZherk)
          : pick(t, (Syrk) JCublas2::cublasSsyrk, JCublas2::cublasDsyrk, JCublas2::cublasCsyrk, JCublas2::cublasZsyrk);
        check(f.call(handle, uplo(r.getUplo()), op(r.getTransA()), n, k, herk ? realAlpha : alpha, ptr(call.a()),
          r.getLda(), herk ? realBeta : beta, ptr(call.c()), r.getLdc()), "cublas" + call.op());
        break;
      }
      case SYR2K:
      case HER2K: {
        boolean her2k = call.op() == BlasOp.HER2K;
        Syr2k f = her2k ? pick(t, null, null, (Syr2k) JCublas2::cublasCher2k, JCublas2::cublasZher2k)
          : pick(t, (Syr2k) JCublas2::cublasSsyr2k, JCublas2::cublasDsyr2k, JCublas2::cublasCsyr2k,
            JCublas2::cublasZsyr2k);
        check(f.call(handle, uplo(r.getUplo()), op(r.getTransA()), n, k, alpha, ptr(call.a()), r.getLda(),
          ptr(call.b()), r.getLdb(), her2k ? realBeta : beta, ptr(call.c()), r.getLdc()), "cublas" + call.op());
        break;
      }
      case TRMM:
        check(pick(t, (Trmm) JCublas2::cublasStrmm, JCublas2::cublasDtrmm, JCublas2::cublasCtrmm, JCublas2::cublasZtrmm)
          .call(handle, side(r.getSide()), uplo(r.getUplo()), op(r.getTransA()), diag(r.getDiag()), m, n, alpha,
            ptr(call.a()), r.getLda(), ptr(call.b()), r.getLdb(), ptr(call.c()), r.getLdc()), "cublasTrmm");
        break;
      case TRSM:
        check(pick(t, (Trsm) JCublas2::cublasStrsm, JCublas2::cublasDtrsm, JCublas2::cublasCtrsm, JCublas2::cublasZtrsm)
          .call(handle, side(r.getSide()), uplo(r.getUplo()), op(r.getTransA()), diag(r.getDiag()), m, n, alpha,
            ptr(call.a()), r.getLda(), ptr(call.b()), r.getLdb()), "cublasTrsm");
        break;
      case AXPY:
        check(pick(t, (Axpy) JCublas2::cublasSaxpy, JCublas2::cublasDaxpy, JCublas2::cublasCaxpy, JCublas2::cublasZaxpy)
          .call(handle, n, alpha, ptr(call.x()), r.getIncx(), ptr(call.y()), r.getIncy()), "cublasAxpy");
        break;
      case SCAL:
        // A complex vector scaled by a real alpha: CSSCAL / ZDSCAL, which take the real scalar.
        if (t.isComplex() && r.getAlphaImag() == 0) {
          check(pick(t, null, null, (Scal) JCublas2::cublasCsscal, JCublas2::cublasZdscal)
            .call(handle, n, realAlpha, ptr(call.x()), r.getIncx()), "cublasScal");
          break;
        }
        check(pick(t, (Scal) JCublas2::cublasSscal, JCublas2::cublasDscal, JCublas2::cublasCscal, JCublas2::cublasZscal)
          .call(handle, n, alpha, ptr(call.x()), r.getIncx()), "cublasScal");
        break;
      case COPY:
        check(pick(t, (Pair) JCublas2::cublasScopy, JCublas2::cublasDcopy, JCublas2::cublasCcopy, JCublas2::cublasZcopy)
          .call(handle, n, ptr(call.x()), r.getIncx(), ptr(call.y()), r.getIncy()), "cublasCopy");
        break;
      case SWAP:
        check(pick(t, (Pair) JCublas2::cublasSswap, JCublas2::cublasDswap, JCublas2::cublasCswap, JCublas2::cublasZswap)
          .call(handle, n, ptr(call.x()), r.getIncx(), ptr(call.y()), r.getIncy()), "cublasSwap");
        break;
      case ROT: {
        // The cosine is real for every form; a complex pair with a real sine runs CSROT / ZDROT.
        boolean realSine = !t.isComplex() || r.getSineImag() == 0;
        Rot f = realSine
          ? pick(t, (Rot) JCublas2::cublasSrot, JCublas2::cublasDrot, JCublas2::cublasCsrot, JCublas2::cublasZdrot)
          : pick(t, null, null, (Rot) JCublas2::cublasCrot, JCublas2::cublasZrot);
        Pointer sine = realSine ? scalar(t.component(), r.getSine()) : scalar(t, r.getSine(), r.getSineImag());
        check(f.call(handle, n, ptr(call.x()), r.getIncx(), ptr(call.y()), r.getIncy(),
          scalar(t.component(), r.getCosine()), sine), "cublasRot");
        break;
      }
      default:
        throw BackendException.of(FailureCode.UNSUPPORTED, call.op() + " has no cuBLAS mapping");
    }
    return null;
  }

  private void gemm(BlasCall call, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c) throws BackendException {
    BlasRequest r = call.request();
    DType t = call.dtype();
    Pointer alpha = scalar(t, r.getAlpha(), r.getAlphaImag());
    Pointer beta = scalar(t, r.getBeta(), r.getBetaImag());
    if (t.isComplex()) {
      check(t == DType.C128
        ? JCublas2.cublasZgemm(handle, op(r.getTransA()), op(r.getTransB()), r.getM(), r.getN(), r.getK(), alpha,
          a, r.getLda(), b, r.getLdb(), beta, c, r.getLdc())
        : JCublas2.cublasCgemm(handle, op(r.getTransA()), op(r.getTransB()), r.getM(), r.getN(), r.getK(), alpha,
          a, r.getLda(), b, r.getLdb(), beta, c, r.getLdc()), "cublasGemm");
      return;
    }
    check(t == DType.F64
      ? JCublas2.cublasDgemm(handle, op(r.getTransA()), op(r.getTransB()), r.getM(), r.getN(), r.getK(), alpha,
        a, r.getLda(), b, r.getLdb(), beta, c, r.getLdc())
      : JCublas2.cublasSgemm(handle, op(r.getTransA()), op(r.getTransB()), r.getM(), r.getN(), r.getK(), alpha,
        a, r.getLda(), b, r.getLdb(), beta, c, r.getLdc()), "cublasGemm");
  }

  /** An Ex GEMM's data types, compute type and scalars. */
  private static final class Ex {
    int in;
    int out;
    int compute;
    Pointer alpha;
    Pointer beta;
  }

  /**
   * The cudaDataType values of an Ex GEMM. Through JCuda 11.8 on cuBLAS 13, every cublasComputeType
   * (CUBLAS_COMPUTE_32F, ..._FAST_TF32) answered NOT_SUPPORTED while the older cudaDataType compute
   * types worked (cuBLAS maps them: CUDA_R_16F to 16F, CUDA_R_32F and CUDA_C_32F to 32F, or to
   * 32F_FAST_TF32 in TF32 math mode, CUDA_R_64F and CUDA_C_64F to 64F); TF32 so comes from the math
   * mode {@link #math} set. alpha and beta are of the compute type: half, float, double, or their
   * complex pairs for complex data.
   */
  private static Ex ex(BlasCall call) {
    BlasRequest r = call.request();
    Ex ex = new Ex();
    ex.in = dataType(call.a() != null ? call.a().dtype() : call.batch(Operands.Slot.BATCH_A)[0].dtype());
    DType out = call.dtype();
    ex.out = dataType(out);
    switch (call.computeType()) {
      case F16:
        ex.compute = cudaDataType.CUDA_R_16F;
        ex.alpha = Pointer.to(new short[] {(short) DType.F16.round(r.getAlpha())});
        ex.beta = Pointer.to(new short[] {(short) DType.F16.round(r.getBeta())});
        return ex;
      case F64:
        ex.compute = out.isComplex() ? cudaDataType.CUDA_C_64F : cudaDataType.CUDA_R_64F;
        break;
      default: // F32, F32_FAST_TF32
        ex.compute = out.isComplex() ? cudaDataType.CUDA_C_32F : cudaDataType.CUDA_R_32F;
    }
    DType scale = out.isComplex() ? out : call.computeType() == BlasComputeType.F64 ? DType.F64 : DType.F32;
    ex.alpha = scalar(scale, r.getAlpha(), r.getAlphaImag());
    ex.beta = scalar(scale, r.getBeta(), r.getBetaImag());
    return ex;
  }

  private void gemmEx(BlasCall call, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c) throws BackendException {
    BlasRequest r = call.request();
    Ex ex = ex(call);
    check(JCublas2.cublasGemmEx(handle, op(r.getTransA()), op(r.getTransB()), r.getM(), r.getN(), r.getK(), ex.alpha,
      a, ex.in, r.getLda(), b, ex.in, r.getLdb(), ex.beta, c, ex.out, r.getLdc(), ex.compute,
      cublasGemmAlgo.CUBLAS_GEMM_DEFAULT), "cublasGemmEx");
  }

  /**
   * GEMM_BATCHED_EX: one cublasGemmBatchedEx per {@link #BATCH_CAPACITY} members over pointer arrays
   * staged like a GEMM group's; member by member (cublasGemmEx each) where the ring is full or the
   * call is a recorded step (a replay would not stage the arrays again).
   */
  private void gemmBatchedEx(GpuStream stream, BlasCall call, boolean unstaged) throws BackendException {
    BlasRequest r = call.request();
    Operand[] as = call.batch(Operands.Slot.BATCH_A);
    Operand[] bs = call.batch(Operands.Slot.BATCH_B);
    Operand[] cs = call.batch(Operands.Slot.BATCH_C);
    Ex ex = ex(call);
    for (int from = 0; from < cs.length; from += BATCH_CAPACITY) {
      int first = from;
      int n = Math.min(cs.length - from, BATCH_CAPACITY);
      boolean launched = !unstaged && staged(stream, n, i -> address(as[first + i]), i -> address(bs[first + i]),
        i -> address(cs[first + i]), (aArray, bArray, cArray) -> check(JCublas2.cublasGemmBatchedEx(handle,
          op(r.getTransA()), op(r.getTransB()), r.getM(), r.getN(), r.getK(), ex.alpha, aArray, ex.in, r.getLda(),
          bArray, ex.in, r.getLdb(), ex.beta, cArray, ex.out, r.getLdc(), n, ex.compute,
          cublasGemmAlgo.CUBLAS_GEMM_DEFAULT), "cublasGemmBatchedEx"));
      if (!launched) {
        for (int i = first; i < first + n; i++) {
          gemmEx(call, ptr(as[i]), ptr(bs[i]), ptr(cs[i]));
        }
      }
    }
  }

  /**
   * Puts the handle in TF32 tensor-op math for a real GEMM that asks for it (plain, mixed precision,
   * strided batched or batched) and for an Ex GEMM of compute type F32_FAST_TF32, in cuBLAS's
   * default math for every other call. Called at the entry points, {@link #enqueue} and
   * {@link #enqueueGemmBatch}, before any cuBLAS call; the mode is set only when it changes (the
   * handle is this engine's alone, used on the submission thread only), not set and reset around
   * every TF32 GEMM.
   */
  private void math(BlasCall call) throws BackendException {
    BlasOp op = call.op();
    boolean tf32 = call.computeType() == BlasComputeType.F32_FAST_TF32 || call.request().isTf32()
      && !call.dtype().isComplex() && (op == BlasOp.GEMM || op == BlasOp.GEMM_STRIDED_BATCHED);
    if (tf32 != tf32Math) {
      check(JCublas2.cublasSetMathMode(handle, tf32 ? cublasMath.CUBLAS_TF32_TENSOR_OP_MATH
        : cublasMath.CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
      tf32Math = tf32;
    }
  }

  private static int dataType(DType t) {
    switch (t) {
      case F16: return cudaDataType.CUDA_R_16F;
      case BF16: return cudaDataType.CUDA_R_16BF;
      case F64: return cudaDataType.CUDA_R_64F;
      case C64: return cudaDataType.CUDA_C_32F;
      case C128: return cudaDataType.CUDA_C_64F;
      default: return cudaDataType.CUDA_R_32F;
    }
  }

  /**
   * A reduction into a device slot ({@link #SLOT_BYTES}, room for a complex double), copied to pinned
   * memory; read once the call's event is reached. NRM2 and ASUM of complex data answer a real of
   * the component type, DOT and DOTC a complex one, IAMAX and IAMIN an int.
   */
  private EngineResult scalarCall(BlasCall call) throws BackendException {
    BlasRequest r = call.request();
    DType t = call.dtype();
    int slot;
    synchronized (freeSlots) {
      if (freeSlots.isEmpty()) {
        throw BackendException.of(FailureCode.QUEUE_FULL, SCALAR_SLOTS + " BLAS scalar results are in flight");
      }
      slot = freeSlots.poll();
    }
    // A call that fails before its copy is queued gives its slot back (later users of the slot are
    // on the same stream, after it).
    try {
      CUdeviceptr result = pointers.pointer(scalarDevice, slot * SLOT_BYTES);
      int n = r.getN();
      CUdeviceptr x = ptr(call.x());
      int incx = r.getIncx();
      check(JCublas2.cublasSetPointerMode(handle, cublasPointerMode.CUBLAS_POINTER_MODE_DEVICE), "cublasSetPointerMode");
      try {
        switch (call.op()) {
          case DOT:
            check(pick(t, (Dot) JCublas2::cublasSdot, JCublas2::cublasDdot, JCublas2::cublasCdotu,
              JCublas2::cublasZdotu).call(handle, n, x, incx, ptr(call.y()), r.getIncy(), result), "cublasDot");
            break;
          case DOTC:
            check(pick(t, null, null, (Dot) JCublas2::cublasCdotc, JCublas2::cublasZdotc)
              .call(handle, n, x, incx, ptr(call.y()), r.getIncy(), result), "cublasDotc");
            break;
          case NRM2:
            check(pick(t, (Reduce) JCublas2::cublasSnrm2, JCublas2::cublasDnrm2, JCublas2::cublasScnrm2,
              JCublas2::cublasDznrm2).call(handle, n, x, incx, result), "cublasNrm2");
            break;
          case ASUM:
            check(pick(t, (Reduce) JCublas2::cublasSasum, JCublas2::cublasDasum, JCublas2::cublasScasum,
              JCublas2::cublasDzasum).call(handle, n, x, incx, result), "cublasAsum");
            break;
          case IAMAX:
            check(pick(t, (Reduce) JCublas2::cublasIsamax, JCublas2::cublasIdamax, JCublas2::cublasIcamax,
              JCublas2::cublasIzamax).call(handle, n, x, incx, result), "cublasIamax");
            break;
          default:
            check(pick(t, (Reduce) JCublas2::cublasIsamin, JCublas2::cublasIdamin, JCublas2::cublasIcamin,
              JCublas2::cublasIzamin).call(handle, n, x, incx, result), "cublasIamin");
        }
      } finally {
        JCublas2.cublasSetPointerMode(handle, cublasPointerMode.CUBLAS_POINTER_MODE_HOST);
      }
      Pointer host = scalarHost.withByteOffset(slot * SLOT_BYTES);
      CudaStatus.checkDriver(JCudaDriver.cuMemcpyDtoHAsync(host, result, SLOT_BYTES, cuStream), "cuMemcpyDtoHAsync");
    } catch (BackendException | RuntimeException e) {
      synchronized (freeSlots) {
        freeSlots.add(slot);
      }
      throw e;
    }
    boolean index = call.op() == BlasOp.IAMAX || call.op() == BlasOp.IAMIN;
    boolean complex = call.op() == BlasOp.DOT || call.op() == BlasOp.DOTC;
    boolean wide = t.component() == DType.F64;
    return new EngineResult() {
      private double imaginary;

      @Override
      public double value() {
        ByteBuffer b = scalarHost.getByteBuffer(slot * SLOT_BYTES, SLOT_BYTES).order(ByteOrder.nativeOrder());
        double v = index ? b.getInt(0) : wide ? b.getDouble(0) : b.getFloat(0);
        if (complex && t.isComplex()) {
          imaginary = wide ? b.getDouble(8) : b.getFloat(4);
        }
        synchronized (freeSlots) {
          freeSlots.add(slot);
        }
        return v;
      }

      @Override
      public double imaginary() {
        return imaginary;
      }
    };
  }

  @Override
  public EngineResult enqueueGemmBatch(GpuStream stream, List<BlasCall> calls) throws BackendException {
    if (calls.isEmpty()) {
      return null;
    }
    // One mode for the whole group, batched or (the ring full) call by call: a group's GEMMs agree on TF32.
    math(calls.get(0));
    for (int from = 0; from < calls.size(); from += BATCH_CAPACITY) {
      List<BlasCall> chunk = calls.subList(from, Math.min(calls.size(), from + BATCH_CAPACITY));
      int n = chunk.size();
      if (!staged(stream, n, i -> address(chunk.get(i).a()), i -> address(chunk.get(i).b()),
          i -> address(chunk.get(i).c()), (aArray, bArray, cArray) -> launchBatched(chunk, n, aArray, bArray, cArray))) {
        // The ring is all still being read by the device: run this chunk call by call.
        for (BlasCall call : chunk) {
          gemm(call, ptr(call.a()), ptr(call.b()), ptr(call.c()));
        }
      }
    }
    return null;
  }

  /** A batched launch over pointer arrays on the device. */
  @FunctionalInterface
  private interface BatchedLaunch {
    void launch(CUdeviceptr aArray, CUdeviceptr bArray, CUdeviceptr cArray) throws BackendException;
  }

  /**
   * Stages the A, B and C pointer arrays of {@code n} members in the ring, copies them to the device
   * on the stream and runs {@code launch} on them; the ring part stays held until the event recorded
   * after the launch is reached. False, with nothing queued, where the ring is all in use.
   */
  private boolean staged(GpuStream stream, int n, IntToLongFunction a, IntToLongFunction b, IntToLongFunction c,
                         BatchedLaunch launch) throws BackendException {
    // Each array 16-byte aligned, each part 256-byte aligned (as the fixed slots were).
    int stride = (n + 1) & ~1;
    long bytes = (3L * stride * 8 + 255) & ~255L;
    long base = staging.reserve(bytes);
    if (base < 0) {
      return false;
    }
    ByteBuffer arraysHost = batchHost.getByteBuffer(base, bytes).order(ByteOrder.nativeOrder());
    for (int i = 0; i < n; i++) {
      arraysHost.putLong(i * 8, a.applyAsLong(i));
      arraysHost.putLong((stride + i) * 8, b.applyAsLong(i));
      arraysHost.putLong((2 * stride + i) * 8, c.applyAsLong(i));
    }
    CUdeviceptr arrays = pointers.pointer(batchDevice, base);
    CudaStatus.checkDriver(JCudaDriver.cuMemcpyHtoDAsync(arrays, batchHost.withByteOffset(base), bytes, cuStream),
      "cuMemcpyHtoDAsync");
    GpuEvent read;
    try {
      launch.launch(arrays, at(arrays, stride, DType.U64), at(arrays, 2L * stride, DType.U64));
      read = device.record(stream);
    } catch (BackendException | RuntimeException | Error e) {
      // The copy (and perhaps the GEMMs) queued on the stream may still read this part, which the
      // ring would hand out again unheld: wait for the stream before the failure goes on (its own
      // status is the failure's, or the context's poisoning, which the caller reports either way).
      JCudaDriver.cuStreamSynchronize(cuStream);
      throw e;
    }
    staging.hold(base, bytes, read);
    return true;
  }

  // One batched GEMM over the pointer arrays of a group of same-shaped GEMMs.
  private void launchBatched(List<BlasCall> chunk, int n, CUdeviceptr aArray, CUdeviceptr bArray, CUdeviceptr cArray)
    throws BackendException {
    BlasCall first = chunk.get(0);
    BlasRequest r = first.request();
    DType t = first.dtype();
    Pointer alpha = scalar(t, r.getAlpha());
    Pointer beta = scalar(t, r.getBeta());
    check(t == DType.F64
      ? JCublas2.cublasDgemmBatched(handle, op(r.getTransA()), op(r.getTransB()), r.getM(), r.getN(), r.getK(),
        alpha, aArray, r.getLda(), bArray, r.getLdb(), beta, cArray, r.getLdc(), n)
      : JCublas2.cublasSgemmBatched(handle, op(r.getTransA()), op(r.getTransB()), r.getM(), r.getN(), r.getK(),
        alpha, aArray, r.getLda(), bArray, r.getLdb(), beta, cArray, r.getLdc(), n), "cublasGemmBatched");
  }
}
