package com.vertxcuda.kernel;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.PipelineHandle;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.device.cuda.CudaBackend;
import com.vertxcuda.device.cuda.CudaUnavailableException;
import com.vertxcuda.message.CopyRequest;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A recorded pipeline on a real GPU, in both isolation modes: fills, a copy, cuBLAS AXPY, SCAL and
 * GEMM, built-in kernels and a user kernel are captured as one CUDA graph, and every replay leaves
 * what the same requests sent one by one leave.
 */
@Tag("gpu")
class PipelineGpuTest {

  private Vertx vertx;

  @BeforeAll
  static void needsGpu() {
    try {
      CudaBackend.load(new DeviceOptions());
    } catch (CudaUnavailableException e) {
      assumeTrue(false, "no usable GPU: " + e.getMessage());
    }
  }

  @BeforeEach
  void vertx() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void close() {
    KernelGpuTest.await(vertx.close());
  }

  @Test
  void capturedAndReplayedInProcess() {
    capturedAndReplayed(Isolation.IN_PROCESS);
  }

  @Test
  void capturedAndReplayedInADeviceHost() {
    capturedAndReplayed(Isolation.PROCESS);
  }

  private void capturedAndReplayed(Isolation isolation) {
    KernelGpuTest.await(vertx.deployVerticle(new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.CUDA)
      .setIsolation(isolation).setRestartLimit(10))));
    DeviceClient device = DeviceClient.create(vertx);
    KernelClient kernels = KernelClient.create(vertx);
    ModuleHandle saxpy = KernelGpuTest.await(kernels.compile(KernelGpuTest.SAXPY, null, List.of())).getModule();
    int n = 4096;
    BufferHandle x = KernelGpuTest.await(device.alloc(DType.F32, n));
    BufferHandle y = KernelGpuTest.await(device.alloc(DType.F32, n));
    BufferHandle z = KernelGpuTest.await(device.alloc(DType.F32, n));
    BufferHandle a = KernelGpuTest.await(device.alloc(DType.F32, 16));
    BufferHandle c = KernelGpuTest.await(device.alloc(DType.F32, 16));
    PipelineHandle p = KernelGpuTest.await(device.record()
      .fill(x, 1)                                                                                      // x = 1
      .fill(y, 2)                                                                                      // y = 2
      .step(Library.BLAS, new BlasRequest(BlasOp.AXPY).setN(n).setAlpha(3).setX(x).setY(y))            // y = 5
      .step(Library.BLAS, new BlasRequest(BlasOp.SCAL).setN(n).setAlpha(2).setX(x))                    // x = 2
      .step(Library.KERNEL, new KernelRequest(KernelOp.ADD).setX(x).setY(y).setOutput(z))              // z = 7
      .step(Library.KERNEL, new KernelRequest(KernelOp.LAUNCH).setModule(saxpy).setFunction("saxpy")
        .setGrid(List.of((n + 127) / 128, 1, 1)).setBlock(List.of(128, 1, 1))
        .setArgs(List.of(KernelArg.scalar(DType.F32, 0.5), KernelArg.in(z), KernelArg.inOut(y),
          KernelArg.integer(DType.I32, n))))                                                           // y = 8.5
      .copy(y, z)                                                                                      // z = 8.5
      .fill(a, 1)                                                                                      // a = 1 (4x4)
      .step(Library.BLAS, new BlasRequest(BlasOp.GEMM).setM(4).setN(4).setK(4).setAlpha(1).setBeta(0)
        .setA(a).setLda(4).setB(z.view(0, 16)).setLdb(4).setC(c).setLdc(4))                            // c = 34
      .step(Library.KERNEL, new KernelRequest(KernelOp.SCALE).setX(c).setScalar(0.5).setOutput(c))     // c = 17
      .build());
    assertTrue(p.captured(), "captured as a CUDA graph: " + p);
    assertEquals(10, p.steps());
    for (int i = 0; i < 20; i++) {
      KernelGpuTest.await(device.fill(y, -1));
      KernelGpuTest.await(device.replay(p));
      assertArrayEquals(filled(n, 2), floats(KernelGpuTest.await(device.download(x))), "replay " + i + ": x");
      assertArrayEquals(filled(n, 8.5f), floats(KernelGpuTest.await(device.download(y))), "replay " + i + ": y");
      assertArrayEquals(filled(n, 8.5f), floats(KernelGpuTest.await(device.download(z))), "replay " + i + ": z");
      assertArrayEquals(filled(16, 17), floats(KernelGpuTest.await(device.download(c))), "replay " + i + ": c");
    }
    // Back to back with requests before and after it.
    BufferHandle saved = KernelGpuTest.await(device.alloc(DType.F32, n));
    KernelGpuTest.await(device.fill(y, 42));
    Future<BufferHandle> before = device.copy(y, saved);
    Future<Void> replay = device.replay(p);
    Future<Buffer> after = device.download(y);
    KernelGpuTest.await(before);
    KernelGpuTest.await(replay);
    assertArrayEquals(filled(n, 8.5f), floats(KernelGpuTest.await(after)));
    assertArrayEquals(filled(n, 42), floats(KernelGpuTest.await(device.download(saved))));
    // An unloaded module fails the replay before anything runs.
    KernelGpuTest.await(kernels.unload(saxpy));
    assertEquals(FailureCode.NOT_FOUND, KernelGpuTest.code(device.replay(p)));
    KernelGpuTest.await(device.release(p));
    assertEquals(FailureCode.NOT_FOUND, KernelGpuTest.code(device.replay(p)));
  }

  private static float[] filled(int n, float v) {
    float[] f = new float[n];
    Arrays.fill(f, v);
    return f;
  }

  private static float[] floats(Buffer b) {
    return KernelGpuTest.floats(b);
  }
}
