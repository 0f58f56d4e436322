package com.vertxcuda.samples.bench;

import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasHandle;
import jcuda.jcublas.cublasMath;
import jcuda.jcublas.cublasOperation;
import jcuda.jcufft.JCufft;
import jcuda.jcufft.cufftHandle;
import jcuda.jcufft.cufftType;
import jcuda.jcurand.JCurand;
import jcuda.jcurand.curandGenerator;
import jcuda.jcurand.curandRngType;
import jcuda.runtime.cudaStream_t;

import java.util.ArrayList;
import java.util.List;

/** The same work as {@link LibraryBench} through raw JCuda calls on one stream, timed with CUDA events. */
final class RawJCuda {

  private RawJCuda() {
  }

  private interface Work {
    void run();
  }

  static List<String> run(LibraryBench.Sizes s) throws Exception {
    // The same native loading as the verticles: the forwarders stand in for CUDA 11's sonames.
    com.vertxcuda.device.cuda.CudaBackend.load(new com.vertxcuda.device.DeviceOptions());
    JCudaDriver.setExceptionsEnabled(true);
    JCublas2.setExceptionsEnabled(true);
    JCufft.setExceptionsEnabled(true);
    JCurand.setExceptionsEnabled(true);
    JCudaDriver.cuInit(0);
    CUdevice device = new CUdevice();
    JCudaDriver.cuDeviceGet(device, 0);
    CUcontext context = new CUcontext();
    JCudaDriver.cuDevicePrimaryCtxRetain(context, device);
    JCudaDriver.cuCtxSetCurrent(context);
    CUstream stream = new CUstream();
    JCudaDriver.cuStreamCreate(stream, 0);
    cudaStream_t rtStream = new cudaStream_t(stream);
    List<String> rows = new ArrayList<>();

    int n = s.gemm();
    CUdeviceptr a = alloc((long) n * n * 4);
    CUdeviceptr b = alloc((long) n * n * 4);
    CUdeviceptr c = alloc((long) n * n * 4);
    JCudaDriver.cuMemsetD32(a, Float.floatToIntBits(1f), (long) n * n);
    JCudaDriver.cuMemsetD32(b, Float.floatToIntBits(0.5f), (long) n * n);
    cublasHandle blas = new cublasHandle();
    JCublas2.cublasCreate(blas);
    JCublas2.cublasSetStream(blas, rtStream);
    Pointer one = Pointer.to(new float[] {1f});
    Pointer zero = Pointer.to(new float[] {0f});
    for (boolean tf32 : new boolean[] {false, true}) {
      JCublas2.cublasSetMathMode(blas, tf32 ? cublasMath.CUBLAS_TF32_TENSOR_OP_MATH : cublasMath.CUBLAS_DEFAULT_MATH);
      double t = time(stream, s.repeats(), () -> JCublas2.cublasSgemm(blas, cublasOperation.CUBLAS_OP_N,
        cublasOperation.CUBLAS_OP_N, n, n, n, one, a, n, b, n, zero, c, n));
      rows.add(String.format("raw JCuda SGEMM %d %s: %.3f ms, %.4g TFLOP/s", n, tf32 ? "TF32" : "FP32", t * 1e3,
        2.0 * n * n * n / t / 1e12));
    }
    JCublas2.cublasSetMathMode(blas, cublasMath.CUBLAS_DEFAULT_MATH);
    JCudaDriver.cuMemFree(a);
    JCudaDriver.cuMemFree(b);
    JCudaDriver.cuMemFree(c);

    int m = 64;
    CUdeviceptr sa = alloc(64L * m * m * 4);
    CUdeviceptr sb = alloc(64L * m * m * 4);
    CUdeviceptr sc = alloc(64L * m * m * 4);
    int calls = s.smallGemms();
    long start = System.nanoTime();
    for (int i = 0; i < calls; i++) {
      JCublas2.cublasSgemm(blas, cublasOperation.CUBLAS_OP_N, cublasOperation.CUBLAS_OP_N, m, m, m, one, sa, m, sb, m,
        zero, sc, m);
    }
    JCudaDriver.cuStreamSynchronize(stream);
    double perCall = (System.nanoTime() - start) / 1e9 / calls;
    rows.add(String.format("raw JCuda 64x64 SGEMM: %.0f calls/s, %.1f us each", 1 / perCall, perCall * 1e6));
    double batched = time(stream, calls / 64, () -> JCublas2.cublasSgemmStridedBatched(blas,
      cublasOperation.CUBLAS_OP_N, cublasOperation.CUBLAS_OP_N, m, m, m, one, sa, m, (long) m * m, sb, m,
      (long) m * m, zero, sc, m, (long) m * m, 64));
    rows.add(String.format("raw JCuda 64 x 64x64 SGEMM strided-batched: %.1f us per call, %.2f us per GEMM",
      batched * 1e6, batched * 1e6 / 64));
    JCudaDriver.cuMemFree(sa);
    JCudaDriver.cuMemFree(sb);
    JCudaDriver.cuMemFree(sc);
    JCublas2.cublasDestroy(blas);

    CUdeviceptr signal = alloc(8L * s.fftLength() * s.fftBatch());
    cufftHandle plan = new cufftHandle();
    JCufft.cufftPlanMany(plan, 1, new int[] {s.fftLength()}, null, 1, 0, null, 1, 0, cufftType.CUFFT_C2C,
      s.fftBatch());
    JCufft.cufftSetStream(plan, rtStream);
    double tf = time(stream, s.repeats(), () -> JCufft.cufftExecC2C(plan, signal, signal, JCufft.CUFFT_FORWARD));
    rows.add(String.format("raw JCuda FFT C2C %d x %d: %.3f ms", s.fftLength(), s.fftBatch(), tf * 1e3));
    JCufft.cufftDestroy(plan);
    JCudaDriver.cuMemFree(signal);

    CUdeviceptr numbers = alloc(4L * s.rngCount());
    curandGenerator gen = new curandGenerator();
    JCurand.curandCreateGenerator(gen, curandRngType.CURAND_RNG_PSEUDO_PHILOX4_32_10);
    JCurand.curandSetStream(gen, rtStream);
    JCurand.curandSetPseudoRandomGeneratorSeed(gen, 1234);
    double tr = time(stream, s.repeats(), () -> JCurand.curandGenerateUniform(gen, numbers, s.rngCount()));
    rows.add(String.format("raw JCuda uniform RNG %d floats: %.3f ms", s.rngCount(), tr * 1e3));
    JCurand.curandDestroyGenerator(gen);
    JCudaDriver.cuMemFree(numbers);
    JCudaDriver.cuStreamDestroy(stream);
    JCudaDriver.cuDevicePrimaryCtxRelease(device);
    return rows;
  }

  private static CUdeviceptr alloc(long bytes) {
    CUdeviceptr p = new CUdeviceptr();
    JCudaDriver.cuMemAlloc(p, bytes);
    return p;
  }

  /** Seconds per repetition on the GPU, after one warm-up, measured with events. */
  private static double time(CUstream stream, int repeats, Work work) {
    work.run();
    CUevent start = new CUevent();
    CUevent stop = new CUevent();
    JCudaDriver.cuEventCreate(start, 0);
    JCudaDriver.cuEventCreate(stop, 0);
    JCudaDriver.cuEventRecord(start, stream);
    for (int i = 0; i < repeats; i++) {
      work.run();
    }
    JCudaDriver.cuEventRecord(stop, stream);
    JCudaDriver.cuEventSynchronize(stop);
    float[] ms = new float[1];
    JCudaDriver.cuEventElapsedTime(ms, start, stop);
    JCudaDriver.cuEventDestroy(start);
    JCudaDriver.cuEventDestroy(stop);
    return ms[0] / 1e3 / Math.max(1, repeats);
  }
}
