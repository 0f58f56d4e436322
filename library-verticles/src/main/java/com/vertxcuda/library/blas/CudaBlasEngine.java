package com.vertxcuda.library.blas;

import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;
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
    scalarDevice = device.allocate(SCALAR_SLOTS * 8L);
    CudaStatus.checkDriver(JCudaDriver.cuMemAllocHost(scalarHost, SCALAR_SLOTS * 8L), "cuMemAllocHost");
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

  /** A host scalar of {@code t}: cuComplex / cuDoubleComplex (real, imaginary) for C64 / C128. */
  private static Pointer scalar(DType t, double re, double im) {
    switch (t) {
      case F64: return Pointer.to(new double[] {re});
      case C64: return Pointer.to(new float[] {(float) re, (float) im});
      case C128: return Pointer.to(new double[] {re, im});
      default: return Pointer.to(new float[] {(float) re});
    }
  }

  private static void check(int status, String call) throws BackendException {
    CudaStatus.CUBLAS.check(status, call);
  }

  @Override
  public EngineResult enqueue(GpuStream stream, BlasCall call) throws BackendException {
    math(call);
    if (call.isScalar()) {
      return scalarCall(call);
    }
    BlasRequest r = call.request();
    DType t = call.dtype();
    boolean d = t == DType.F64;
    Pointer alpha = scalar(t, r.getAlpha(), r.getAlphaImag());
    Pointer beta = scalar(t, r.getBeta(), r.getBetaImag());
    switch (call.op()) {
      case GEMM:
        gemm(call, ptr(call.a()), ptr(call.b()), ptr(call.c()));
        break;
      case GEMM_STRIDED_BATCHED:
        if (t.isComplex()) {
          check(t == DType.C128
            ? JCublas2.cublasZgemmStridedBatched(handle, op(r.getTransA()), op(r.getTransB()), r.getM(), r.getN(),
              r.getK(), alpha, ptr(call.a()), r.getLda(), r.getStrideA(), ptr(call.b()), r.getLdb(), r.getStrideB(),
              beta, ptr(call.c()), r.getLdc(), r.getStrideC(), r.getBatchCount())
            : JCublas2.cublasCgemmStridedBatched(handle, op(r.getTransA()), op(r.getTransB()), r.getM(), r.getN(),
              r.getK(), alpha, ptr(call.a()), r.getLda(), r.getStrideA(), ptr(call.b()), r.getLdb(), r.getStrideB(),
              beta, ptr(call.c()), r.getLdc(), r.getStrideC(), r.getBatchCount()), "cublasGemmStridedBatched");
          break;
        }
        check(d
          ? JCublas2.cublasDgemmStridedBatched(handle, op(r.getTransA()), op(r.getTransB()), r.getM(), r.getN(),
            r.getK(), alpha, ptr(call.a()), r.getLda(), r.getStrideA(), ptr(call.b()), r.getLdb(), r.getStrideB(),
            beta, ptr(call.c()), r.getLdc(), r.getStrideC(), r.getBatchCount())
          : JCublas2.cublasSgemmStridedBatched(handle, op(r.getTransA()), op(r.getTransB()), r.getM(), r.getN(),
            r.getK(), alpha, ptr(call.a()), r.getLda(), r.getStrideA(), ptr(call.b()), r.getLdb(), r.getStrideB(),
            beta, ptr(call.c()), r.getLdc(), r.getStrideC(), r.getBatchCount()), "cublasGemmStridedBatched");
        break;
      case GEMM_EX: {
        int in = dataType(call.a().dtype());
        // Through JCuda 11.8 on cuBLAS 13, every cublasComputeType (CUBLAS_COMPUTE_32F,
        // ..._FAST_TF32) answered NOT_SUPPORTED while the older cudaDataType compute type
        // CUDA_R_32F worked for F16, BF16 and F32 inputs; TF32 then comes from the math mode.
        check(JCublas2.cublasGemmEx(handle, op(r.getTransA()), op(r.getTransB()),
          r.getM(), r.getN(), r.getK(), scalar(DType.F32, r.getAlpha()), ptr(call.a()), in, r.getLda(), ptr(call.b()),
          in, r.getLdb(), scalar(DType.F32, r.getBeta()), ptr(call.c()), cudaDataType.CUDA_R_32F, r.getLdc(),
          cudaDataType.CUDA_R_32F, cublasGemmAlgo.CUBLAS_GEMM_DEFAULT), "cublasGemmEx");
        break;
      }
      case GEMV:
        check(d ? JCublas2.cublasDgemv(handle, op(r.getTransA()), r.getM(), r.getN(), alpha, ptr(call.a()), r.getLda(),
            ptr(call.x()), r.getIncx(), beta, ptr(call.y()), r.getIncy())
          : JCublas2.cublasSgemv(handle, op(r.getTransA()), r.getM(), r.getN(), alpha, ptr(call.a()), r.getLda(),
            ptr(call.x()), r.getIncx(), beta, ptr(call.y()), r.getIncy()), "cublasGemv");
        break;
      case GER:
        check(d ? JCublas2.cublasDger(handle, r.getM(), r.getN(), alpha, ptr(call.x()), r.getIncx(), ptr(call.y()),
            r.getIncy(), ptr(call.a()), r.getLda())
          : JCublas2.cublasSger(handle, r.getM(), r.getN(), alpha, ptr(call.x()), r.getIncx(), ptr(call.y()),
            r.getIncy(), ptr(call.a()), r.getLda()), "cublasGer");
        break;
      case GEAM:
        check(d ? JCublas2.cublasDgeam(handle, op(r.getTransA()), op(r.getTransB()), r.getM(), r.getN(), alpha,
            ptr(call.a()), r.getLda(), beta, ptr(call.b()), r.getLdb(), ptr(call.c()), r.getLdc())
          : JCublas2.cublasSgeam(handle, op(r.getTransA()), op(r.getTransB()), r.getM(), r.getN(), alpha,
            ptr(call.a()), r.getLda(), beta, ptr(call.b()), r.getLdb(), ptr(call.c()), r.getLdc()), "cublasGeam");
        break;
      case SYRK: {
        int uplo = r.getUplo() == FillMode.UPPER ? cublasFillMode.CUBLAS_FILL_MODE_UPPER
          : cublasFillMode.CUBLAS_FILL_MODE_LOWER;
        check(d ? JCublas2.cublasDsyrk(handle, uplo, op(r.getTransA()), r.getN(), r.getK(), alpha, ptr(call.a()),
            r.getLda(), beta, ptr(call.c()), r.getLdc())
          : JCublas2.cublasSsyrk(handle, uplo, op(r.getTransA()), r.getN(), r.getK(), alpha, ptr(call.a()),
            r.getLda(), beta, ptr(call.c()), r.getLdc()), "cublasSyrk");
        break;
      }
      case TRSM: {
        int side = r.getSide() == Side.LEFT ? cublasSideMode.CUBLAS_SIDE_LEFT : cublasSideMode.CUBLAS_SIDE_RIGHT;
        int uplo = r.getUplo() == FillMode.UPPER ? cublasFillMode.CUBLAS_FILL_MODE_UPPER
          : cublasFillMode.CUBLAS_FILL_MODE_LOWER;
        int diag = r.getDiag() == Diagonal.UNIT ? cublasDiagType.CUBLAS_DIAG_UNIT : cublasDiagType.CUBLAS_DIAG_NON_UNIT;
        check(d ? JCublas2.cublasDtrsm(handle, side, uplo, op(r.getTransA()), diag, r.getM(), r.getN(), alpha,
            ptr(call.a()), r.getLda(), ptr(call.b()), r.getLdb())
          : JCublas2.cublasStrsm(handle, side, uplo, op(r.getTransA()), diag, r.getM(), r.getN(), alpha,
            ptr(call.a()), r.getLda(), ptr(call.b()), r.getLdb()), "cublasTrsm");
        break;
      }
      case AXPY:
        check(d ? JCublas2.cublasDaxpy(handle, r.getN(), alpha, ptr(call.x()), r.getIncx(), ptr(call.y()), r.getIncy())
          : JCublas2.cublasSaxpy(handle, r.getN(), alpha, ptr(call.x()), r.getIncx(), ptr(call.y()), r.getIncy()),
          "cublasAxpy");
        break;
      case SCAL:
        check(d ? JCublas2.cublasDscal(handle, r.getN(), alpha, ptr(call.x()), r.getIncx())
          : JCublas2.cublasSscal(handle, r.getN(), alpha, ptr(call.x()), r.getIncx()), "cublasScal");
        break;
      case COPY:
        check(d ? JCublas2.cublasDcopy(handle, r.getN(), ptr(call.x()), r.getIncx(), ptr(call.y()), r.getIncy())
          : JCublas2.cublasScopy(handle, r.getN(), ptr(call.x()), r.getIncx(), ptr(call.y()), r.getIncy()),
          "cublasCopy");
        break;
      case SWAP:
        check(d ? JCublas2.cublasDswap(handle, r.getN(), ptr(call.x()), r.getIncx(), ptr(call.y()), r.getIncy())
          : JCublas2.cublasSswap(handle, r.getN(), ptr(call.x()), r.getIncx(), ptr(call.y()), r.getIncy()),
          "cublasSwap");
        break;
      case ROT:
        check(d ? JCublas2.cublasDrot(handle, r.getN(), ptr(call.x()), r.getIncx(), ptr(call.y()), r.getIncy(),
            scalar(t, r.getCosine()), scalar(t, r.getSine()))
          : JCublas2.cublasSrot(handle, r.getN(), ptr(call.x()), r.getIncx(), ptr(call.y()), r.getIncy(),
            scalar(t, r.getCosine()), scalar(t, r.getSine())), "cublasRot");
        break;
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

  /**
   * Puts the handle in TF32 tensor-op math for a real GEMM that asks for it (plain, mixed precision,
   * strided batched or batched), in cuBLAS's default math for every other call. Called at the two
   * entry points, {@link #enqueue} and {@link #enqueueGemmBatch}, before any cuBLAS call; the mode
   * is set only when it changes (the handle is this engine's alone, used on
   * the submission thread only), not set and reset around every TF32 GEMM.
   */
  private void math(BlasCall call) throws BackendException {
    BlasOp op = call.op();
    boolean tf32 = call.request().isTf32() && !call.dtype().isComplex()
      && (op == BlasOp.GEMM || op == BlasOp.GEMM_EX || op == BlasOp.GEMM_STRIDED_BATCHED);
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
      default: return cudaDataType.CUDA_R_32F;
    }
  }

  private EngineResult scalarCall(BlasCall call) throws BackendException {
    BlasRequest r = call.request();
    boolean d = call.dtype() == DType.F64;
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
      CUdeviceptr result = pointers.pointer(scalarDevice, slot * 8L);
      int n = r.getN();
      CUdeviceptr x = ptr(call.x());
      int incx = r.getIncx();
      check(JCublas2.cublasSetPointerMode(handle, cublasPointerMode.CUBLAS_POINTER_MODE_DEVICE), "cublasSetPointerMode");
      try {
        switch (call.op()) {
          case DOT:
            check(d ? JCublas2.cublasDdot(handle, n, x, incx, ptr(call.y()), r.getIncy(), result)
              : JCublas2.cublasSdot(handle, n, x, incx, ptr(call.y()), r.getIncy(), result), "cublasDot");
            break;
          case NRM2:
            check(d ? JCublas2.cublasDnrm2(handle, n, x, incx, result) : JCublas2.cublasSnrm2(handle, n, x, incx, result),
              "cublasNrm2");
            break;
          case ASUM:
            check(d ? JCublas2.cublasDasum(handle, n, x, incx, result) : JCublas2.cublasSasum(handle, n, x, incx, result),
              "cublasAsum");
            break;
          case IAMAX:
            check(d ? JCublas2.cublasIdamax(handle, n, x, incx, result)
              : JCublas2.cublasIsamax(handle, n, x, incx, result), "cublasIamax");
            break;
          default:
            check(d ? JCublas2.cublasIdamin(handle, n, x, incx, result)
              : JCublas2.cublasIsamin(handle, n, x, incx, result), "cublasIamin");
        }
      } finally {
        JCublas2.cublasSetPointerMode(handle, cublasPointerMode.CUBLAS_POINTER_MODE_HOST);
      }
      Pointer host = scalarHost.withByteOffset(slot * 8L);
      CudaStatus.checkDriver(JCudaDriver.cuMemcpyDtoHAsync(host, result, 8, cuStream), "cuMemcpyDtoHAsync");
    } catch (BackendException | RuntimeException e) {
      synchronized (freeSlots) {
        freeSlots.add(slot);
      }
      throw e;
    }
    boolean index = call.op() == BlasOp.IAMAX || call.op() == BlasOp.IAMIN;
    return () -> {
      ByteBuffer b = scalarHost.getByteBuffer(slot * 8L, 8).order(ByteOrder.nativeOrder());
      double v = index ? b.getInt(0) : d ? b.getDouble(0) : b.getFloat(0);
      synchronized (freeSlots) {
        freeSlots.add(slot);
      }
      return v;
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
      // Each array 16-byte aligned, each part 256-byte aligned (as the fixed slots were).
      int stride = (n + 1) & ~1;
      long bytes = (3L * stride * 8 + 255) & ~255L;
      long base = staging.reserve(bytes);
      if (base < 0) {
        // The ring is all still being read by the device: run this chunk call by call.
        for (BlasCall call : chunk) {
          gemm(call, ptr(call.a()), ptr(call.b()), ptr(call.c()));
        }
        continue;
      }
      ByteBuffer arraysHost = batchHost.getByteBuffer(base, bytes).order(ByteOrder.nativeOrder());
      for (int i = 0; i < n; i++) {
        BlasCall call = chunk.get(i);
        arraysHost.putLong(i * 8, address(call.a()));
        arraysHost.putLong((stride + i) * 8, address(call.b()));
        arraysHost.putLong((2 * stride + i) * 8, address(call.c()));
      }
      CUdeviceptr arrays = pointers.pointer(batchDevice, base);
      CudaStatus.checkDriver(JCudaDriver.cuMemcpyHtoDAsync(arrays, batchHost.withByteOffset(base), bytes, cuStream),
        "cuMemcpyHtoDAsync");
      GpuEvent read;
      try {
        launchBatched(chunk, n, stride, arrays);
        read = device.record(stream);
      } catch (BackendException | RuntimeException | Error e) {
        // The copy (and perhaps the GEMMs) queued on the stream may still read this part, which the
        // ring would hand out again unheld: wait for the stream before the failure goes on (its own
        // status is the failure's, or the context's poisoning, which the caller reports either way).
        JCudaDriver.cuStreamSynchronize(cuStream);
        throw e;
      }
      staging.hold(base, bytes, read);
    }
    return null;
  }

  // One batched GEMM over the pointer arrays at {@code arrays} (A's, then B's, then C's, {@code stride} apart).
  private void launchBatched(List<BlasCall> chunk, int n, int stride, CUdeviceptr arrays) throws BackendException {
    CUdeviceptr aArray = arrays;
    CUdeviceptr bArray = at(arrays, stride, DType.U64);
    CUdeviceptr cArray = at(arrays, 2L * stride, DType.U64);
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
