package com.vertxcuda.kernel;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.RequestPhases;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.device.RequestListener;
import io.vertx.core.Vertx;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasHandle;
import jcuda.jcublas.cublasOperation;
import jcuda.runtime.cudaStream_t;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static com.vertxcuda.kernel.KernelGpuTest.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A GEMM's phases on a real GPU: its GPU time comes from CUDA events around the cuBLAS call, so an
 * 8192³ FP32 GEMM reads as the kernel's time: within 5 % of the same GEMM timed by raw JCuda (CUDA
 * events around {@code cublasSgemm} on a stream of its own, in this JVM, before the toolkit runs),
 * medians of {@value #RUNS} runs each, with the context in this process and in a device host; the
 * same for a caller who asks for the timings ({@link com.vertxcuda.Timed}) of a device that measures
 * nothing by itself.
 */
@Tag("gpu")
class PhasesGpuTest {

  private static final int N = 8192;
  private static final int RUNS = 5;
  /** The raw GEMM's median time, in ns. */
  private static long rawNanos;
  private Vertx vertx;

  @BeforeAll
  static void needsGpu() {
    KernelGpuTest.needsGpu();
    rawNanos = rawGemmNanos();
  }

  // RUNS timed FP32 GEMMs of N on device 0's primary context, its own stream and cuBLAS handle in
  // cuBLAS's default math (as the toolkit's BLAS has it for a plain SGEMM), after one to warm up.
  private static long rawGemmNanos() {
    JCudaDriver.setExceptionsEnabled(true);
    JCublas2.setExceptionsEnabled(true);
    CUdevice dev = new CUdevice();
    CUcontext ctx = new CUcontext();
    CUstream stream = new CUstream();
    cublasHandle handle = new cublasHandle();
    long bytes = (long) N * N * Sizeof.FLOAT;
    CUdeviceptr[] m = {new CUdeviceptr(), new CUdeviceptr(), new CUdeviceptr()};
    CUevent start = new CUevent();
    CUevent end = new CUevent();
    try {
      JCudaDriver.cuInit(0);
      JCudaDriver.cuDeviceGet(dev, 0);
      JCudaDriver.cuDevicePrimaryCtxRetain(ctx, dev);
      JCudaDriver.cuCtxSetCurrent(ctx);
      JCudaDriver.cuStreamCreate(stream, 0);
      JCublas2.cublasCreate(handle);
      JCublas2.cublasSetStream(handle, new cudaStream_t(stream));
      for (CUdeviceptr p : m) {
        JCudaDriver.cuMemAlloc(p, bytes);
        JCudaDriver.cuMemsetD32Async(p, Float.floatToIntBits(1f), (long) N * N, stream);
      }
      JCudaDriver.cuEventCreate(start, 0);
      JCudaDriver.cuEventCreate(end, 0);
      Pointer one = Pointer.to(new float[] {1f});
      Pointer zero = Pointer.to(new float[] {0f});
      long[] times = new long[RUNS];
      for (int i = -1; i < RUNS; i++) {
        JCudaDriver.cuEventRecord(start, stream);
        JCublas2.cublasSgemm(handle, cublasOperation.CUBLAS_OP_N, cublasOperation.CUBLAS_OP_N, N, N, N, one, m[0], N, m[1], N,
          zero, m[2], N);
        JCudaDriver.cuEventRecord(end, stream);
        JCudaDriver.cuEventSynchronize(end);
        float[] ms = new float[1];
        JCudaDriver.cuEventElapsedTime(ms, start, end);
        if (i >= 0) {
          times[i] = (long) (ms[0] * 1e6);
        }
      }
      return median(times);
    } finally {
      JCudaDriver.cuStreamSynchronize(stream);
      for (CUdeviceptr p : m) {
        JCudaDriver.cuMemFree(p);
      }
      JCudaDriver.cuEventDestroy(start);
      JCudaDriver.cuEventDestroy(end);
      JCublas2.cublasDestroy(handle);
      JCudaDriver.cuStreamDestroy(stream);
      JCudaDriver.cuCtxSetCurrent(new CUcontext());
      JCudaDriver.cuDevicePrimaryCtxRelease(dev);
      // The toolkit, run next in this JVM, reads JCuda's status codes: exceptions off, as it has them.
      JCudaDriver.setExceptionsEnabled(false);
      JCublas2.setExceptionsEnabled(false);
    }
  }

  private static long median(long[] values) {
    long[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }

  @BeforeEach
  void vertx() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void close() {
    await(vertx.close());
  }

  @ParameterizedTest
  @EnumSource(value = Isolation.class, names = {"IN_PROCESS", "PROCESS"})
  void gemmGpuTimeIsTheKernels(Isolation isolation) {
    List<RequestPhases> gemms = new CopyOnWriteArrayList<>();
    RequestListener listener = new RequestListener() {
      @Override
      public void answered(String address, Library library, FailureCode code, long nanos) {
      }

      @Override
      public boolean wantsPhases() {
        return true;
      }

      @Override
      public void phases(String address, Library library, Object body, FailureCode code, RequestPhases phases) {
        if (body instanceof BlasRequest && code == null) {
          gemms.add(phases);
        }
      }
    };
    await(vertx.deployVerticle(new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.CUDA)
      .setIsolation(isolation)).setRequestListener(listener)));
    BlasClient blas = BlasClient.create(vertx);
    BufferHandle[] abc = operands();
    BufferHandle a = abc[0];
    BufferHandle b = abc[1];
    BufferHandle c = abc[2];
    // A first GEMM warms cuBLAS up; the next RUNS are measured, one at a time as the raw ones were.
    for (int i = 0; i <= RUNS; i++) {
      await(blas.gemm(Transpose.N, Transpose.N, N, N, N, 1, a, N, b, N, 0, c, N));
    }
    assertTrue(gemms.size() == RUNS + 1, "every GEMM's phases were heard: " + gemms);
    long[] gpu = new long[RUNS];
    for (int i = 0; i < RUNS; i++) {
      RequestPhases p = gemms.get(i + 1);
      assertTrue(p.getGpuNanos() <= p.getTotalNanos(), p + ": the GPU time fits the request's");
      assertTrue(p.getQueueNanos() >= 0 && p.getStreamWaitNanos() >= 0, p.toString());
      gpu[i] = p.getGpuNanos();
    }
    long toolkit = median(gpu);
    double flops = 2.0 * N * N * N;
    double off = Math.abs(toolkit - rawNanos) / (double) rawNanos;
    System.out.printf("[figure] SGEMM %d GPU time (%s): toolkit %.3f ms (CUDA events on its stream), raw JCuda %.3f ms"
        + " (cuEvent around cublasSgemm), %+.1f %%; %.1f TFLOP/s%n", N, isolation, toolkit / 1e6, rawNanos / 1e6,
      (toolkit - rawNanos) * 100.0 / rawNanos, flops / toolkit / 1e3);
    assertTrue(off <= 0.05, "the toolkit's GPU time " + toolkit + " ns is within 5 % of raw JCuda's " + rawNanos + " ns");
  }

  @ParameterizedTest
  @EnumSource(value = Isolation.class, names = {"IN_PROCESS", "PROCESS"})
  void aCallerWhoAsksGetsTheKernelsTime(Isolation isolation) {
    // No listener and no tracer: the device measures nothing by itself; the caller asks per request.
    await(vertx.deployVerticle(new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.CUDA).setIsolation(isolation))));
    BlasClient blas = BlasClient.create(vertx);
    BufferHandle[] abc = operands();
    BufferHandle a = abc[0];
    BufferHandle b = abc[1];
    BufferHandle c = abc[2];
    long[] gpu = new long[RUNS];
    for (int i = -1; i < RUNS; i++) {
      com.vertxcuda.Timed<BufferHandle> t = await(com.vertxcuda.Timed.measure(vertx,
        () -> blas.gemm(Transpose.N, Transpose.N, N, N, N, 1, a, N, b, N, 0, c, N)));
      assertTrue(t.requests().size() == 1 && t.requests().get(0).phases() != null, t.requests().toString());
      RequestPhases p = t.requests().get(0).phases();
      assertTrue(p.getGpuNanos() > 0 && p.getGpuNanos() <= p.getTotalNanos(), p.toString());
      if (i >= 0) {
        gpu[i] = p.getGpuNanos();
      }
    }
    long toolkit = median(gpu);
    System.out.printf("[figure] SGEMM %d GPU time to the caller who asks (Timed, %s): %.3f ms, raw JCuda %.3f ms, %+.1f %%%n",
      N, isolation, toolkit / 1e6, rawNanos / 1e6, (toolkit - rawNanos) * 100.0 / rawNanos);
    assertTrue(Math.abs(toolkit - rawNanos) <= 0.05 * rawNanos,
      "the GPU time the caller got, " + toolkit + " ns, is within 5 % of raw JCuda's " + rawNanos + " ns");
  }

  // A, B (ones) and C of N×N floats on the device.
  private BufferHandle[] operands() {
    DeviceClient device = DeviceClient.create(vertx);
    long elements = (long) N * N;
    BufferHandle[] abc = new BufferHandle[3];
    for (int i = 0; i < 3; i++) {
      abc[i] = await(device.alloc(DType.F32, elements));
      if (i < 2) {
        await(device.fill(abc[i], 1f));
      }
    }
    return abc;
  }
}
