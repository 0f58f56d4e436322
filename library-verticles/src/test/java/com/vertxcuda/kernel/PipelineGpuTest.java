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
import com.vertxcuda.fft.FftClient;
import com.vertxcuda.fft.FftRequest;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.message.CopyRequest;
import com.vertxcuda.rand.Distribution;
import com.vertxcuda.rand.RandClient;
import com.vertxcuda.rand.RandRequest;
import com.vertxcuda.rand.RngType;
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
 * what the same requests sent one by one leave; so do cuRAND numbers, cuFFT R2C and C2R and a
 * complex product; and pipelines that upload from and download into transfer buffers, captured
 * with a memcpy node at each end.
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

  @Test
  void fftAndRandCapturedInProcess() {
    fftAndRandCaptured(Isolation.IN_PROCESS);
  }

  @Test
  void fftAndRandCapturedInADeviceHost() {
    fftAndRandCaptured(Isolation.PROCESS);
  }

  /**
   * cuRAND numbers, cuFFT R2C and C2R execs and a complex product captured in one graph: every replay
   * leaves what the same requests leave, the numbers included (the same ones each replay).
   */
  private void fftAndRandCaptured(Isolation isolation) {
    KernelGpuTest.await(vertx.deployVerticle(new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.CUDA)
      .setIsolation(isolation).setRestartLimit(10))));
    DeviceClient device = DeviceClient.create(vertx);
    int n = 4096;
    int bins = n / 2 + 1;
    BufferHandle[] replayed = spectralBuffers(device, n, bins);
    BufferHandle[] requested = spectralBuffers(device, n, bins);
    PipelineHandle p = KernelGpuTest.await(device.record()
      .step(Library.RAND, spectralSteps(replayed, n).get(0))
      .step(Library.FFT, spectralSteps(replayed, n).get(1))
      .step(Library.KERNEL, spectralSteps(replayed, n).get(2))
      .step(Library.FFT, spectralSteps(replayed, n).get(3))
      .step(Library.RAND, spectralSteps(replayed, n).get(4))
      .build());
    assertTrue(p.captured(), "captured as a CUDA graph: " + p);
    List<Object> alone = spectralSteps(requested, n);
    KernelGpuTest.await(RandClient.create(vertx).generate((RandRequest) alone.get(0)));
    KernelGpuTest.await(FftClient.create(vertx).execute((FftRequest) alone.get(1)));
    KernelGpuTest.await(KernelClient.create(vertx).execute((KernelRequest) alone.get(2)));
    KernelGpuTest.await(FftClient.create(vertx).execute((FftRequest) alone.get(3)));
    KernelGpuTest.await(RandClient.create(vertx).generate((RandRequest) alone.get(4)));
    float[] numbers = floats(KernelGpuTest.await(device.download(requested[0])));
    float[] squared = floats(KernelGpuTest.await(device.download(requested[3])));
    float[] normals = floats(KernelGpuTest.await(device.download(requested[4])));
    for (int i = 0; i < 5; i++) {
      KernelGpuTest.await(device.fill(replayed[0], -1));
      KernelGpuTest.await(device.fill(replayed[3], -1));
      KernelGpuTest.await(device.fill(replayed[4], -1));
      KernelGpuTest.await(device.replay(p));
      assertArrayEquals(numbers, floats(KernelGpuTest.await(device.download(replayed[0]))), "replay " + i + ": uniforms");
      assertArrayEquals(normals, floats(KernelGpuTest.await(device.download(replayed[4]))), "replay " + i + ": normals");
      float[] got = floats(KernelGpuTest.await(device.download(replayed[3])));
      for (int k = 0; k < n; k++) {
        assertEquals(squared[k], got[k], 1e-3f * Math.max(1, Math.abs(squared[k])), "replay " + i + ": r ⊛ r at " + k);
      }
    }
    KernelGpuTest.await(device.free(replayed[1]));
    assertEquals(FailureCode.NOT_FOUND, KernelGpuTest.code(device.replay(p)));
    KernelGpuTest.await(device.release(p));
  }

  @Test
  void transferBuffersCapturedInProcess() {
    transferBuffersCaptured(Isolation.IN_PROCESS);
  }

  @Test
  void transferBuffersCapturedInADeviceHost() {
    transferBuffersCaptured(Isolation.PROCESS);
  }

  /**
   * Upload → SCALE → fill → ADD → download through transfer buffers (pinned in-process, the device
   * host's page-locked region in process isolation), captured as one graph with a memcpy node at
   * each end: each replay reads the transfer buffer's bytes as they are then and lands the result in
   * the other; then upload → R2C → complex product → C2R → download, against the same requests sent
   * one by one. A heap buffer is refused at build; a transfer buffer released before its pipeline
   * still serves its replays.
   */
  private void transferBuffersCaptured(Isolation isolation) {
    DeviceVerticle verticle = new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.CUDA)
      .setIsolation(isolation).setRestartLimit(10));
    KernelGpuTest.await(vertx.deployVerticle(verticle));
    DeviceClient device = DeviceClient.create(vertx);
    int n = 4096;
    BufferHandle x = KernelGpuTest.await(device.alloc(DType.F32, n));
    BufferHandle y = KernelGpuTest.await(device.alloc(DType.F32, n));
    BufferHandle z = KernelGpuTest.await(device.alloc(DType.F32, n));
    BufferHandle w = KernelGpuTest.await(device.alloc(DType.F32, n));
    Buffer in = zeroedTransferBuffer(verticle, n);
    Buffer out = zeroedTransferBuffer(verticle, n);
    PipelineHandle p = KernelGpuTest.await(device.record()
      .upload(in, x)
      .step(Library.KERNEL, new KernelRequest(KernelOp.SCALE).setX(x).setScalar(2.5).setOutput(y))
      .fill(z, 1)
      .step(Library.KERNEL, new KernelRequest(KernelOp.ADD).setX(y).setY(z).setOutput(w))
      .download(w, out)
      .build());
    assertTrue(p.captured(), "captured as a CUDA graph: " + p);
    assertEquals(5, p.steps());
    float[] values = new float[n];
    float[] expected = new float[n];
    for (int round = 0; round < 10; round++) {
      for (int i = 0; i < n; i++) {
        values[i] = ((i * 7 + round * 13) % 33 - 16) / 2f; // halves: exact through * 2.5 + 1
        expected[i] = values[i] * 2.5f + 1f;
        in.setFloatLE(i * 4, values[i]);
        out.setFloatLE(i * 4, Float.NaN);
      }
      KernelGpuTest.await(device.replay(p));
      assertArrayEquals(expected, floats(out), "replay " + round + ": the transfer buffer downloaded into");
      assertArrayEquals(values, floats(KernelGpuTest.await(device.download(x))), "replay " + round + ": x");
    }
    // Heap memory is no transfer buffer: refused at build.
    assertEquals(FailureCode.BAD_REQUEST, KernelGpuTest.code(device.record().upload(Buffer.buffer(new byte[n * 4]), x).build()));
    // Released before its pipeline: the memory stays the pipeline's until the pipeline goes.
    assertTrue(verticle.releaseTransferBuffer(in));
    KernelGpuTest.await(device.fill(x, -1));
    KernelGpuTest.await(device.replay(p));
    assertArrayEquals(values, floats(KernelGpuTest.await(device.download(x))), "after an early release: x");
    assertArrayEquals(expected, floats(out), "after an early release: out");
    KernelGpuTest.await(device.release(p));

    // The pipeline: upload, R2C, the squared spectrum, C2R, download.
    int bins = n / 2 + 1;
    BufferHandle[] replayed = spectralBuffers(device, n, bins);
    BufferHandle[] requested = spectralBuffers(device, n, bins);
    List<Object> steps = spectralSteps(replayed, n);
    Buffer signal = zeroedTransferBuffer(verticle, n);
    Buffer convolved = zeroedTransferBuffer(verticle, n);
    PipelineHandle spectral = KernelGpuTest.await(device.record()
      .upload(signal, replayed[0])
      .step(Library.FFT, steps.get(1))
      .step(Library.KERNEL, steps.get(2))
      .step(Library.FFT, steps.get(3))
      .download(replayed[3], convolved)
      .build());
    assertTrue(spectral.captured(), "captured as a CUDA graph: " + spectral);
    List<Object> alone = spectralSteps(requested, n);
    for (int round = 0; round < 3; round++) {
      Buffer samples = Buffer.buffer(n * 4);
      for (int i = 0; i < n; i++) {
        float v = (float) Math.sin(0.01 * i * (round + 1)) + (i % 5) * 0.1f;
        samples.appendFloatLE(v);
        signal.setFloatLE(i * 4, v);
      }
      KernelGpuTest.await(device.upload(requested[0], samples));
      KernelGpuTest.await(FftClient.create(vertx).execute((FftRequest) alone.get(1)));
      KernelGpuTest.await(KernelClient.create(vertx).execute((KernelRequest) alone.get(2)));
      KernelGpuTest.await(FftClient.create(vertx).execute((FftRequest) alone.get(3)));
      float[] reference = floats(KernelGpuTest.await(device.download(requested[3])));
      KernelGpuTest.await(device.replay(spectral));
      float[] got = floats(convolved);
      for (int k = 0; k < n; k++) {
        assertEquals(reference[k], got[k], 1e-3f * Math.max(1, Math.abs(reference[k])), "replay " + round + ": r ⊛ r at " + k);
      }
    }
    KernelGpuTest.await(device.release(spectral));
    assertTrue(verticle.releaseTransferBuffer(signal));
    assertTrue(verticle.releaseTransferBuffer(convolved));
    assertTrue(verticle.releaseTransferBuffer(out));
  }

  // r (uniforms), its spectrum, the squared spectrum, r ⊛ r, normals.
  private static BufferHandle[] spectralBuffers(DeviceClient device, int n, int bins) {
    return new BufferHandle[] {KernelGpuTest.await(device.alloc(DType.F32, n)),
      KernelGpuTest.await(device.alloc(DType.C64, bins)), KernelGpuTest.await(device.alloc(DType.C64, bins)),
      KernelGpuTest.await(device.alloc(DType.F32, n)), KernelGpuTest.await(device.alloc(DType.F32, n))};
  }

  private static List<Object> spectralSteps(BufferHandle[] b, int n) {
    return List.of(
      new RandRequest().setGenerator(RngType.PHILOX4_32_10).setSeed(3).setOffset(100).setOutput(b[0]),
      new FftRequest().setType(FftType.R2C).setN(List.of(n)).setInput(b[0]).setOutput(b[1]),
      new KernelRequest(KernelOp.MULTIPLY).setX(b[1]).setY(b[1]).setOutput(b[2]),
      new FftRequest().setType(FftType.C2R).setN(List.of(n)).setInput(b[2]).setOutput(b[3]),
      new RandRequest().setGenerator(RngType.XORWOW).setSeed(4).setDistribution(Distribution.NORMAL).setOutput(b[4]));
  }

  private static float[] filled(int n, float v) {
    float[] f = new float[n];
    Arrays.fill(f, v);
    return f;
  }

  /** A transfer buffer the device lends, holding {@code n} floats of 0. */
  private static Buffer zeroedTransferBuffer(DeviceVerticle verticle, int n) {
    Buffer b = verticle.allocateTransferBuffer(n * 4);
    for (int i = 0; i < n; i++) {
      b.appendFloatLE(0);
    }
    return b;
  }

  private static float[] floats(Buffer b) {
    return KernelGpuTest.floats(b);
  }
}
