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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.concurrent.atomic.AtomicReference;

import static com.vertxcuda.kernel.KernelGpuTest.await;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A GEMM's phases on a real GPU: its GPU time comes from CUDA events around the cuBLAS call, so an
 * 8192³ FP32 GEMM reads as the kernel's time (between what the GPU's peak allows and the request's
 * whole time), with the context in this process and in a device host.
 */
@Tag("gpu")
class PhasesGpuTest {

  private static final int N = 8192;
  private Vertx vertx;

  @BeforeAll
  static void needsGpu() {
    KernelGpuTest.needsGpu();
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
    AtomicReference<RequestPhases> gemm = new AtomicReference<>();
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
          gemm.set(phases);
        }
      }
    };
    await(vertx.deployVerticle(new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.CUDA)
      .setIsolation(isolation)).setRequestListener(listener)));
    DeviceClient device = DeviceClient.create(vertx);
    BlasClient blas = BlasClient.create(vertx);
    long elements = (long) N * N;
    BufferHandle a = await(device.alloc(DType.F32, elements));
    BufferHandle b = await(device.alloc(DType.F32, elements));
    BufferHandle c = await(device.alloc(DType.F32, elements));
    await(device.fill(a, 1f));
    await(device.fill(b, 1f));
    // A first GEMM warms cuBLAS up; the second is the one measured.
    await(blas.gemm(Transpose.N, Transpose.N, N, N, N, 1, a, N, b, N, 0, c, N));
    await(blas.gemm(Transpose.N, Transpose.N, N, N, N, 1, a, N, b, N, 0, c, N));
    RequestPhases p = gemm.get();
    assertNotNull(p, "the GEMM's phases were heard");
    double flops = 2.0 * N * N * N;
    // No GPU of this generation exceeds 100 TFLOP/s in FP32 without tensor cores.
    assertTrue(p.getGpuNanos() > flops / 100e12 * 1e9, "GPU time " + p.getGpuNanos() + " ns is the kernel's");
    assertTrue(p.getGpuNanos() <= p.getTotalNanos(), p + ": the GPU time fits the request's");
    assertTrue(p.getQueueNanos() >= 0 && p.getStreamWaitNanos() >= 0, p.toString());
    System.out.println("gemm " + N + " " + isolation + ": " + p + ", " + flops / p.getGpuNanos() / 1e3 + " TFLOP/s");
  }
}
