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

  /** Device 0's primary context, current on this thread, and a stream on it. */
  private record Session(CUdevice device, CUcontext context, CUstream stream, cudaStream_t rtStream) {
    static Session open(int streamFlags) throws Exception {
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
      JCudaDriver.cuStreamCreate(stream, streamFlags);
      return new Session(device, context, stream, new cudaStream_t(stream));
    }
  }

  static List<String> run(LibraryBench.Sizes s) throws Exception {
    Session raw = Session.open(0);
    CUdevice device = raw.device();
    CUstream stream = raw.stream();
    cudaStream_t rtStream = raw.rtStream();
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
      double t = time(stream, tf32 ? s.tf32() : s.fp32(), () -> JCublas2.cublasSgemm(blas, cublasOperation.CUBLAS_OP_N,
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
    double tf = time(stream, s.fft(), () -> JCufft.cufftExecC2C(plan, signal, signal, JCufft.CUFFT_FORWARD));
    rows.add(String.format("raw JCuda FFT C2C %d x %d: %.3f ms", s.fftLength(), s.fftBatch(), tf * 1e3));
    JCufft.cufftDestroy(plan);
    JCudaDriver.cuMemFree(signal);

    CUdeviceptr numbers = alloc(4L * s.rngCount());
    curandGenerator gen = new curandGenerator();
    JCurand.curandCreateGenerator(gen, curandRngType.CURAND_RNG_PSEUDO_PHILOX4_32_10);
    JCurand.curandSetStream(gen, rtStream);
    JCurand.curandSetPseudoRandomGeneratorSeed(gen, 1234);
    double tr = time(stream, s.rng(), () -> JCurand.curandGenerateUniform(gen, numbers, s.rngCount()));
    rows.add(String.format("raw JCuda uniform RNG %d floats: %.3f ms", s.rngCount(), tr * 1e3));
    JCurand.curandDestroyGenerator(gen);
    JCudaDriver.cuMemFree(numbers);
    JCudaDriver.cuStreamDestroy(stream);
    JCudaDriver.cuDevicePrimaryCtxRelease(device);
    return rows;
  }

  /**
   * Raw variants that tell the verticles' overheads apart (to tell the hops apart): RNG reseeded per
   * call as the RAND verticle does, RNG timed by the host clock, FFT with a 64-bit plan as the FFT
   * verticle makes, and RNG with another thread polling an event as the completion poller does.
   */
  static List<String> variants(long rngCount, int fftLength, int fftBatch, int repeats) throws Exception {
    Session raw = Session.open(jcuda.driver.CUstream_flags.CU_STREAM_NON_BLOCKING);
    CUdevice device = raw.device();
    CUcontext context = raw.context();
    CUstream stream = raw.stream();
    cudaStream_t rtStream = raw.rtStream();
    List<String> rows = new ArrayList<>();

    CUdeviceptr numbers = alloc(4L * rngCount);
    curandGenerator gen = new curandGenerator();
    JCurand.curandCreateGenerator(gen, curandRngType.CURAND_RNG_PSEUDO_PHILOX4_32_10);
    JCurand.curandSetStream(gen, rtStream);
    JCurand.curandSetPseudoRandomGeneratorSeed(gen, 1234);
    double once = time(stream, repeats, () -> JCurand.curandGenerateUniform(gen, numbers, rngCount));
    double reseeded = time(stream, repeats, () -> {
      JCurand.curandSetPseudoRandomGeneratorSeed(gen, 1234);
      JCurand.curandSetGeneratorOffset(gen, 0);
      JCurand.curandGenerateUniform(gen, numbers, rngCount);
    });
    rows.add(String.format("raw RNG seeded once %.3f ms, reseeded per call %.3f ms (GPU time per call)", once * 1e3,
      reseeded * 1e3));
    long[] hostCall = new long[repeats];
    long t0 = System.nanoTime();
    for (int i = 0; i < repeats; i++) {
      long c0 = System.nanoTime();
      JCurand.curandSetPseudoRandomGeneratorSeed(gen, 1234);
      JCurand.curandSetGeneratorOffset(gen, 0);
      JCurand.curandGenerateUniform(gen, numbers, rngCount);
      hostCall[i] = System.nanoTime() - c0;
    }
    JCudaDriver.cuStreamSynchronize(stream);
    double wall = (System.nanoTime() - t0) / 1e9 / repeats;
    rows.add(String.format("raw RNG reseeded, host clock incl. sync: %.3f ms per call; host time of each call (us): %s",
      wall * 1e3, java.util.Arrays.toString(java.util.Arrays.stream(hostCall).map(x -> x / 1000).toArray())));
    for (String what : new String[] {"seed only", "offset only", "continuing"}) {
      long c0 = System.nanoTime();
      long worst = 0;
      for (int i = 0; i < repeats; i++) {
        long c1 = System.nanoTime();
        if (what.equals("seed only")) {
          JCurand.curandSetPseudoRandomGeneratorSeed(gen, 1234);
        } else if (what.equals("offset only")) {
          JCurand.curandSetGeneratorOffset(gen, 0);
        }
        JCurand.curandGenerateUniform(gen, numbers, rngCount);
        worst = Math.max(worst, System.nanoTime() - c1);
      }
      JCudaDriver.cuStreamSynchronize(stream);
      rows.add(String.format("raw RNG %s per call: host clock incl. sync %.3f ms per call, longest host call %d us",
        what, (System.nanoTime() - c0) / 1e6 / repeats, worst / 1000));
    }
    // Another thread spinning on cuEventQuery, as the completion poller does while work is pending.
    CUevent far = new CUevent();
    JCudaDriver.cuEventCreate(far, jcuda.driver.CUevent_flags.CU_EVENT_DISABLE_TIMING);
    java.util.concurrent.atomic.AtomicBoolean polling = new java.util.concurrent.atomic.AtomicBoolean(true);
    java.util.concurrent.atomic.AtomicLong queries = new java.util.concurrent.atomic.AtomicLong();
    JCudaDriver.cuEventRecord(far, stream);
    Thread poller = new Thread(() -> {
      JCudaDriver.cuCtxSetCurrent(context);
      JCudaDriver.setExceptionsEnabled(false);
      while (polling.get()) {
        JCudaDriver.cuEventQuery(far);
        queries.incrementAndGet();
      }
    });
    poller.start();
    double contended = time(stream, repeats, () -> {
      JCurand.curandSetPseudoRandomGeneratorSeed(gen, 1234);
      JCurand.curandSetGeneratorOffset(gen, 0);
      JCurand.curandGenerateUniform(gen, numbers, rngCount);
    });
    polling.set(false);
    poller.join();
    JCudaDriver.setExceptionsEnabled(true);
    rows.add(String.format("raw RNG reseeded with a thread polling cuEventQuery: %.3f ms per call (%d queries)",
      contended * 1e3, queries.get()));
    JCurand.curandDestroyGenerator(gen);
    JCudaDriver.cuMemFree(numbers);

    CUdeviceptr signal = alloc(8L * fftLength * fftBatch);
    cufftHandle plan = new cufftHandle();
    JCufft.cufftPlanMany(plan, 1, new int[] {fftLength}, null, 1, 0, null, 1, 0, cufftType.CUFFT_C2C, fftBatch);
    JCufft.cufftSetStream(plan, rtStream);
    double planMany = time(stream, repeats, () -> JCufft.cufftExecC2C(plan, signal, signal, JCufft.CUFFT_FORWARD));
    JCufft.cufftDestroy(plan);
    cufftHandle plan64 = new cufftHandle();
    JCufft.cufftCreate(plan64);
    JCufft.cufftSetStream(plan64, rtStream);
    long[] work = new long[1];
    JCufft.cufftMakePlanMany64(plan64, 1, new long[] {fftLength}, new long[] {fftLength}, 1, fftLength,
      new long[] {fftLength}, 1, fftLength, cufftType.CUFFT_C2C, fftBatch, work);
    double many64 = time(stream, repeats, () -> JCufft.cufftExecC2C(plan64, signal, signal, JCufft.CUFFT_FORWARD));
    long f0 = System.nanoTime();
    for (int i = 0; i < repeats; i++) {
      JCufft.cufftExecC2C(plan64, signal, signal, JCufft.CUFFT_FORWARD);
    }
    JCudaDriver.cuStreamSynchronize(stream);
    double fftWall = (System.nanoTime() - f0) / 1e9 / repeats;
    rows.add(String.format("raw FFT cufftPlanMany %.3f ms, cufftMakePlanMany64 with layout %.3f ms (GPU time), "
      + "host clock incl. sync %.3f ms", planMany * 1e3, many64 * 1e3, fftWall * 1e3));
    JCufft.cufftDestroy(plan64);
    JCudaDriver.cuMemFree(signal);
    JCudaDriver.cuStreamDestroy(stream);
    JCudaDriver.cuDevicePrimaryCtxRelease(device);
    return rows;
  }

  private static CUdeviceptr alloc(long bytes) {
    CUdeviceptr p = new CUdeviceptr();
    JCudaDriver.cuMemAlloc(p, bytes);
    return p;
  }

  /** Seconds per timed call on the GPU, after the warm-up calls (as many as the verticles had), measured with events. */
  private static double time(CUstream stream, LibraryBench.Counts counts, Work work) {
    for (int i = 0; i < counts.warmUp(); i++) {
      work.run();
    }
    return time(stream, counts.timed(), work);
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
