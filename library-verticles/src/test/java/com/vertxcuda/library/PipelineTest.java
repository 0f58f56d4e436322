package com.vertxcuda.library;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.PipelineHandle;
import com.vertxcuda.PipelineRecorder;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.device.TestDevices;
import com.vertxcuda.kernel.KernelClient;
import com.vertxcuda.kernel.KernelOp;
import com.vertxcuda.kernel.KernelRequest;
import com.vertxcuda.DeviceStats;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftRequest;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.rand.RngType;
import com.vertxcuda.rand.Distribution;
import com.vertxcuda.rand.RandRequest;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Recorded pipelines on the host backend, in the isolation the suite runs with: a 10-step pipeline
 * of fills, copies, BLAS and kernels, and one of every FFT transform type and RAND generator, give
 * what the same requests sent one by one give; replays keep their place among other requests; bad
 * steps are refused at record; freed buffers, released pipelines and a rebuilt context fail replays
 * with their own codes.
 */
class PipelineTest extends HostDeviceTest {

  @Override
  protected boolean devicePerTest() {
    return true; // a poison test rebuilds the context under the others
  }

  static final int N = 8;

  /** The buffers one pipeline works on. */
  final class Buffers {
    final BufferHandle x = await(device.alloc(DType.F32, N));
    final BufferHandle y = await(device.alloc(DType.F32, N));
    final BufferHandle z = await(device.alloc(DType.F32, N));
    final BufferHandle w = await(device.alloc(DType.F32, N));
    final BufferHandle a = await(device.alloc(DType.F32, 4));
    final BufferHandle c = await(device.alloc(DType.F32, 4));
  }

  /** One step: the library (null: the device) and its body. */
  record Step(Library library, Object body) {
  }

  /** Ten steps over {@code b}; see {@link #assertPipelineResult} for what they leave. */
  static List<Step> tenSteps(Buffers b) {
    List<Step> s = new ArrayList<>();
    s.add(new Step(null, com.vertxcuda.message.FillRequest.of(b.x, 1)));                      // x = 1
    s.add(new Step(null, com.vertxcuda.message.FillRequest.of(b.y, 2)));                      // y = 2
    s.add(new Step(Library.BLAS, new BlasRequest(BlasOp.AXPY).setN(N).setAlpha(3).setX(b.x).setY(b.y))); // y = 5
    s.add(new Step(Library.BLAS, new BlasRequest(BlasOp.SCAL).setN(N).setAlpha(2).setX(b.x)));           // x = 2
    s.add(new Step(Library.KERNEL, new KernelRequest(KernelOp.ADD).setX(b.x).setY(b.y).setOutput(b.z))); // z = 7
    s.add(new Step(Library.KERNEL, new KernelRequest(KernelOp.SCALE).setX(b.z).setScalar(0.5).setOutput(b.w))); // w = 3.5
    s.add(new Step(null, new com.vertxcuda.message.CopyRequest(b.w, b.y)));                   // y = 3.5
    s.add(new Step(null, com.vertxcuda.message.FillRequest.of(b.a, 1)));                      // a = 1 (2x2)
    s.add(new Step(Library.BLAS, new BlasRequest(BlasOp.GEMM).setM(2).setN(2).setK(2).setAlpha(1).setBeta(0)
      .setA(b.a).setLda(2).setB(b.y.view(0, 4)).setLdb(2).setC(b.c).setLdc(2)));              // c = 7
    s.add(new Step(Library.BLAS, new BlasRequest(BlasOp.AXPY).setN(4).setAlpha(1).setX(b.c).setY(b.w))); // w[0..4) = 10.5
    return s;
  }

  void assertPipelineResult(Buffers b, String what) {
    float[] ones = new float[N];
    java.util.Arrays.fill(ones, 2);
    assertArrayEquals(ones, readF32(b.x), what + ": x");
    java.util.Arrays.fill(ones, 3.5f);
    assertArrayEquals(ones, readF32(b.y), what + ": y");
    java.util.Arrays.fill(ones, 7);
    assertArrayEquals(ones, readF32(b.z), what + ": z");
    assertArrayEquals(new float[] {10.5f, 10.5f, 10.5f, 10.5f, 3.5f, 3.5f, 3.5f, 3.5f}, readF32(b.w), what + ": w");
    assertArrayEquals(new float[] {7, 7, 7, 7}, readF32(b.c), what + ": c");
  }

  PipelineRecorder recorder(List<Step> steps) {
    PipelineRecorder r = device.record();
    for (Step s : steps) {
      if (s.library() == null && s.body() instanceof com.vertxcuda.message.CopyRequest c) {
        r.copy(c.getSource(), c.getTarget());
      } else if (s.library() == null && s.body() instanceof com.vertxcuda.message.FillRequest f) {
        r.fill(f.getHandle(), Float.intBitsToFloat((int) f.getBits()));
      } else {
        r.step(s.library(), s.body());
      }
    }
    return r;
  }

  Future<?> sendAlone(Step s) {
    if (s.library() == null) {
      return s.body() instanceof com.vertxcuda.message.CopyRequest c ? device.copy(c.getSource(), c.getTarget())
        : device.fill(((com.vertxcuda.message.FillRequest) s.body()).getHandle(),
          Float.intBitsToFloat((int) ((com.vertxcuda.message.FillRequest) s.body()).getBits()));
    }
    return switch (s.library()) {
      case BLAS -> blas.execute((BlasRequest) s.body());
      case FFT -> fft.execute((FftRequest) s.body());
      case RAND -> rand.generate((RandRequest) s.body());
      default -> KernelClient.create(vertx).execute((KernelRequest) s.body());
    };
  }

  @Test
  void replaysGiveWhatTheRequestsSentOneByOneGive() {
    Buffers alone = new Buffers();
    for (Step s : tenSteps(alone)) {
      await(sendAlone(s));
    }
    assertPipelineResult(alone, "sent one by one");

    Buffers b = new Buffers();
    PipelineRecorder recorder = recorder(tenSteps(b));
    assertEquals(10, recorder.size());
    PipelineHandle p = await(recorder.build());
    assertEquals(10, p.steps());
    // Captured as one CUDA graph on cuda; the host backend replays step by step.
    assertEquals(com.vertxcuda.device.TestDevices.backend() == com.vertxcuda.device.BackendKind.CUDA, p.captured(),
      "captured on " + com.vertxcuda.device.TestDevices.backend());
    assertArrayEquals(new float[N], readF32(b.x), "recording runs nothing");
    for (int i = 0; i < 5; i++) {
      await(device.fill(b.x, -1));
      await(device.fill(b.w, -1));
      await(device.replay(p));
      assertPipelineResult(b, "replay " + i);
      for (BufferHandle h : List.of(b.x, b.y, b.z, b.w, b.c)) {
        assertArrayEquals(readF32(sameIn(alone, b, h)), readF32(h), "replay " + i + " equals the requests one by one");
      }
    }
    await(device.release(p));
  }

  private static BufferHandle sameIn(Buffers from, Buffers in, BufferHandle h) {
    return h == in.x ? from.x : h == in.y ? from.y : h == in.z ? from.z : h == in.w ? from.w : from.c;
  }

  /** The buffers of the FFT and RAND pipeline. */
  final class Spectra {
    final BufferHandle r = await(device.alloc(DType.F32, 16));
    final BufferHandle c = await(device.alloc(DType.C64, 9));
    final BufferHandle c2 = await(device.alloc(DType.C64, 9));
    final BufferHandle c3 = await(device.alloc(DType.C64, 9));
    final BufferHandle out = await(device.alloc(DType.F32, 16));
    final BufferHandle normal = await(device.alloc(DType.F32, 16));
    final BufferHandle logNormal = await(device.alloc(DType.F32, 16));
    final BufferHandle mtgp = await(device.alloc(DType.F32, 16));
    final BufferHandle sobol = await(device.alloc(DType.U32, 16));
    final BufferHandle d = await(device.alloc(DType.F64, 16));
    final BufferHandle z = await(device.alloc(DType.C128, 9));
    final BufferHandle z2 = await(device.alloc(DType.C128, 9));
    final BufferHandle dout = await(device.alloc(DType.F64, 16));
    final BufferHandle uniform64 = await(device.alloc(DType.F64, 16));

    /** What the steps leave defined (a C2R or Z2D input is left unspecified: c2, z). */
    List<BufferHandle> results() {
      return List.of(r, c, c3, out, normal, logNormal, mtgp, sobol, d, z, dout, uniform64);
    }
  }

  private static FftRequest fft(FftType type, FftDirection direction, int n, BufferHandle in, BufferHandle out) {
    return new FftRequest().setType(type).setDirection(direction).setN(List.of(n)).setBatch(1).setInput(in)
      .setOutput(out);
  }

  private static RandRequest rand(RngType generator, Distribution d, long seed, BufferHandle out) {
    return new RandRequest().setGenerator(generator).setDistribution(d).setSeed(seed).setOutput(out);
  }

  /** Every FFT transform type, both directions, every generator and distribution, and complex products. */
  static List<Step> spectralSteps(Spectra b) {
    List<Step> s = new ArrayList<>();
    s.add(new Step(Library.RAND, rand(RngType.PHILOX4_32_10, Distribution.UNIFORM, 7, b.r)));
    s.add(new Step(Library.FFT, fft(FftType.R2C, null, 16, b.r, b.c)));
    s.add(new Step(Library.FFT, fft(FftType.C2C, FftDirection.FORWARD, 9, b.c, b.c2)));
    s.add(new Step(Library.FFT, fft(FftType.C2C, FftDirection.INVERSE, 9, b.c2, b.c3)));
    s.add(new Step(Library.KERNEL, new KernelRequest(KernelOp.MULTIPLY).setX(b.c3).setY(b.c).setOutput(b.c2)));
    s.add(new Step(Library.FFT, fft(FftType.C2R, null, 16, b.c2, b.out)));
    s.add(new Step(Library.RAND, rand(RngType.XORWOW, Distribution.NORMAL, 3, b.normal).setOffset(5)));
    s.add(new Step(Library.RAND, rand(RngType.MRG32K3A, Distribution.LOG_NORMAL, 4, b.logNormal).setStddev(0.5)));
    s.add(new Step(Library.RAND, rand(RngType.MTGP32, Distribution.UNIFORM, 11, b.mtgp)));
    s.add(new Step(Library.RAND, rand(RngType.SOBOL32, Distribution.POISSON, 0, b.sobol).setDimensions(2)
      .setLambda(4)));
    s.add(new Step(Library.RAND, rand(RngType.PHILOX4_32_10, Distribution.NORMAL, 9, b.d)));
    s.add(new Step(Library.FFT, fft(FftType.D2Z, null, 16, b.d, b.z)));
    s.add(new Step(Library.FFT, fft(FftType.Z2Z, FftDirection.FORWARD, 9, b.z, b.z2)));
    s.add(new Step(Library.KERNEL, new KernelRequest(KernelOp.MULTIPLY).setX(b.z).setY(b.z2).setOutput(b.z)));
    s.add(new Step(Library.FFT, fft(FftType.Z2Z, FftDirection.INVERSE, 9, b.z, b.z2)));
    s.add(new Step(Library.FFT, fft(FftType.Z2D, null, 16, b.z2, b.dout)));
    s.add(new Step(Library.RAND, rand(RngType.MRG32K3A, Distribution.UNIFORM, 5, b.uniform64)));
    return s;
  }

  @Test
  void fftRandAndComplexProductStepsReplayAsTheRequestsDo() {
    Spectra alone = new Spectra();
    List<Step> steps = spectralSteps(alone);
    for (Step s : steps) {
      await(sendAlone(s));
    }
    Spectra b = new Spectra();
    PipelineHandle p = await(recorder(spectralSteps(b)).build());
    assertEquals(steps.size(), p.steps());
    // cuFFT execs, the numbers' copies and the products are captured in the one CUDA graph on cuda.
    assertEquals(TestDevices.backend() == com.vertxcuda.device.BackendKind.CUDA, p.captured(),
      "captured on " + TestDevices.backend());
    assertArrayEquals(new float[16], readF32(b.r), "recording runs nothing");
    for (int i = 0; i < 2; i++) {
      for (BufferHandle h : List.of(b.r, b.out, b.normal, b.logNormal, b.mtgp)) {
        await(device.fill(h, -1));
      }
      await(device.replay(p));
      // A RAND step writes its request's numbers every replay, as sending the request again does.
      for (int k = 0; k < b.results().size(); k++) {
        BufferHandle h = b.results().get(k);
        assertClose(alone.results().get(k), h, "replay " + i + ", " + h.dtype() + " result " + k);
      }
    }
    // The pipeline's values are the transforms': the forward then inverse C2C of c is 9 · c.
    float[] c = readF32(b.c);
    float[] c3 = readF32(b.c3);
    for (int i = 0; i < c.length; i++) {
      assertEquals(9 * c[i], c3[i], 1e-4 * Math.max(1, Math.abs(9 * c[i])), "C2C round trip at " + i);
    }
    await(device.release(p));
  }

  // The same values, bit for bit where no transform ran in between (RAND outputs), else within the
  // rounding of the dtype (the pipeline's plans are its own, made as the cached ones are).
  private void assertClose(BufferHandle expected, BufferHandle actual, String what) {
    switch (actual.dtype()) {
      case U32 -> assertArrayEquals(readU32(expected), readU32(actual), what);
      case F64, C128 -> {
        double[] e = readF64(expected);
        double[] a = readF64(actual);
        for (int i = 0; i < e.length; i++) {
          assertEquals(e[i], a[i], 1e-12 * Math.max(1, Math.abs(e[i])), what + " at " + i);
        }
      }
      default -> {
        float[] e = readF32(expected);
        float[] a = readF32(actual);
        for (int i = 0; i < e.length; i++) {
          assertEquals(e[i], a[i], 1e-5 * Math.max(1, Math.abs(e[i])), what + " at " + i);
        }
      }
    }
  }

  @Test
  void badFftRandAndProductStepsAreRefusedAtRecord() {
    Spectra b = new Spectra();
    await(device.fill(b.r, 9));
    // A transform larger than its buffers.
    CudaException e = failure(device.record().fill(b.r, 5)
      .step(Library.FFT, fft(FftType.R2C, null, 32, b.r, b.c)).build());
    assertEquals(FailureCode.BAD_REQUEST, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains("steps[1]") && e.getMessage().contains("FftRequest"), e.getMessage());
    // Generating into a freed buffer.
    BufferHandle gone = await(device.alloc(DType.F32, 16));
    await(device.free(gone));
    e = failure(device.record().fill(b.r, 5).step(Library.RAND, rand(RngType.XORWOW, Distribution.UNIFORM, 1, gone))
      .build());
    assertEquals(FailureCode.BAD_REQUEST, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains("steps[1]") && e.getMessage().contains("NOT_FOUND"), e.getMessage());
    // Normals come in pairs: an odd length is refused.
    e = failure(device.record().step(Library.RAND, rand(RngType.XORWOW, Distribution.NORMAL, 1, b.r.view(0, 3)))
      .build());
    assertEquals(FailureCode.BAD_REQUEST, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains("steps[0]"), e.getMessage());
    // A complex product of a complex and a real buffer.
    e = failure(device.record().step(Library.FFT, fft(FftType.R2C, null, 16, b.r, b.c))
      .step(Library.KERNEL, new KernelRequest(KernelOp.MULTIPLY).setX(b.c).setY(b.out).setOutput(b.c2)).build());
    assertEquals(FailureCode.BAD_REQUEST, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains("steps[1]"), e.getMessage());
    float[] nine = new float[16];
    java.util.Arrays.fill(nine, 9);
    assertArrayEquals(nine, readF32(b.r), "nothing ran");
    // Refused recordings hold nothing: no plan and no numbers stay counted.
    DeviceStats stats = await(device.stats());
    assertEquals(0L, stats.getLibraryBytes().getOrDefault("fft", 0L), "fft bytes " + stats.getLibraryBytes());
    assertEquals(0L, stats.getLibraryBytes().getOrDefault("rand", 0L), "rand bytes " + stats.getLibraryBytes());
  }

  @Test
  void fftAndRandStepsHoldTheirPlanAndNumbersUntilReleasedAndFailTypedOnceTheirBuffersAreFreed() {
    Spectra b = new Spectra();
    PipelineHandle p = await(device.record().step(Library.RAND, rand(RngType.PHILOX4_32_10, Distribution.UNIFORM, 2, b.r))
      .step(Library.FFT, fft(FftType.R2C, null, 16, b.r, b.c)).build());
    DeviceStats held = await(device.stats());
    assertEquals(16L * 4, held.getLibraryBytes().getOrDefault("rand", 0L), "the step's numbers: " + held.getLibraryBytes());
    if (TestDevices.backend() == com.vertxcuda.device.BackendKind.HOST) {
      // The host plan's tables; cuFFT needs no work area for a transform this small (its plan counts 0).
      assertTrue(held.getLibraryBytes().getOrDefault("fft", 0L) > 0, "the step's own plan: " + held.getLibraryBytes());
    }
    await(device.replay(p));
    float[] first = readF32(b.r);
    await(device.fill(b.r, 9));
    await(device.free(b.c));
    CudaException e = failure(device.replay(p));
    assertEquals(FailureCode.NOT_FOUND, e.code(), e.getMessage());
    float[] nine = new float[16];
    java.util.Arrays.fill(nine, 9);
    assertArrayEquals(nine, readF32(b.r), "no step ran");
    assertFalse(java.util.Arrays.equals(nine, first), "the first replay generated");
    await(device.release(p));
    // The plan and the numbers go once the pipeline's uses are done.
    long deadline = System.nanoTime() + 10_000_000_000L;
    DeviceStats stats = await(device.stats());
    while ((stats.getLibraryBytes().getOrDefault("rand", 0L) != 0 || stats.getLibraryBytes().getOrDefault("fft", 0L) != 0)
      && System.nanoTime() < deadline) {
      stats = await(device.stats());
    }
    assertEquals(0L, stats.getLibraryBytes().getOrDefault("rand", 0L), "after release: " + stats.getLibraryBytes());
    assertEquals(0L, stats.getLibraryBytes().getOrDefault("fft", 0L), "after release: " + stats.getLibraryBytes());
  }

  @Test
  void aReplayKeepsItsPlaceAmongOtherRequests() {
    Buffers b = new Buffers();
    PipelineHandle p = await(recorder(tenSteps(b)).build());
    BufferHandle saved = await(device.alloc(DType.F32, N));
    await(device.fill(b.y, 42));
    for (int round = 0; round < 3; round++) {
      // Sent back to back, none awaited: the copy before the replay sees y before it, the
      // downloads after it see what it left.
      Future<BufferHandle> before = device.copy(b.y, saved);
      Future<Void> replay = device.replay(p);
      Future<Buffer> y = device.download(b.y);
      Future<BufferHandle> after = device.fill(b.y, 42);
      await(before);
      await(replay);
      float[] seen = floats(await(y));
      await(after);
      float[] expected = new float[N];
      java.util.Arrays.fill(expected, 42);
      assertArrayEquals(expected, readF32(saved), "round " + round + ": the request before the replay");
      java.util.Arrays.fill(expected, 3.5f);
      assertArrayEquals(expected, seen, "round " + round + ": the request after the replay");
    }
  }

  private static float[] floats(Buffer b) {
    float[] out = new float[b.length() / 4];
    for (int i = 0; i < out.length; i++) {
      out[i] = b.getFloatLE(i * 4);
    }
    return out;
  }

  @Test
  void badStepsAreRefusedAtRecordAndNothingIsRecorded() {
    Buffers b = new Buffers();
    await(device.fill(b.x, 9));
    BufferHandle f64 = await(device.alloc(DType.F64, N));
    // Wrong dtype: an F32 AXPY on an F64 vector.
    CudaException e = failure(device.record().fill(b.x, 5)
      .step(Library.BLAS, new BlasRequest(BlasOp.AXPY).setN(N).setX(f64).setY(b.y)).build());
    assertEquals(FailureCode.BAD_REQUEST, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains("steps[1]"), e.getMessage());
    float[] nine = new float[N];
    java.util.Arrays.fill(nine, 9);
    assertArrayEquals(nine, readF32(b.x), "the good step before it never ran");

    // A freed buffer.
    BufferHandle gone = await(device.alloc(DType.F32, N));
    await(device.free(gone));
    e = failure(device.record().fill(b.x, 5).copy(gone, b.y).build());
    assertEquals(FailureCode.BAD_REQUEST, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains("steps[1]") && e.getMessage().contains("NOT_FOUND"), e.getMessage());

    // What cannot be recorded: a scalar result, a module load, a fill out of range.
    e = failure(device.record().step(Library.BLAS, new BlasRequest(BlasOp.DOT).setN(N).setX(b.x).setY(b.y)).build());
    assertEquals(FailureCode.BAD_REQUEST, e.code());
    assertTrue(e.getMessage().contains("scalar"), e.getMessage());
    e = failure(device.record().step(Library.KERNEL, new KernelRequest(KernelOp.LOAD_PTX).setPtx("x")).build());
    assertEquals(FailureCode.BAD_REQUEST, e.code());
    e = failure(device.record().fill(await(device.alloc(DType.I32, 2)), 0.5).build());
    assertEquals(FailureCode.BAD_REQUEST, e.code());
    e = failure(device.record().build());
    assertEquals(FailureCode.BAD_REQUEST, e.code());
    assertArrayEquals(nine, readF32(b.x), "nothing ran");
  }

  @Test
  void aReplayAfterAFreeFailsAndRunsNothing() {
    Buffers b = new Buffers();
    PipelineHandle p = await(recorder(tenSteps(b)).build());
    await(device.fill(b.x, 9));
    await(device.free(b.c));
    CudaException e = failure(device.replay(p));
    assertEquals(FailureCode.NOT_FOUND, e.code(), e.getMessage());
    float[] nine = new float[N];
    java.util.Arrays.fill(nine, 9);
    assertArrayEquals(nine, readF32(b.x), "no step ran");
  }

  @Test
  void releaseFreesThePipeline() {
    Buffers b = new Buffers();
    PipelineHandle p = await(recorder(tenSteps(b)).build());
    await(device.replay(p));
    await(device.release(p));
    assertEquals(FailureCode.NOT_FOUND, failure(device.replay(p)).code());
    assertEquals(FailureCode.NOT_FOUND, failure(device.release(p)).code());
    PipelineHandle forged = new PipelineHandle(p.node(), p.device(), p.generation(), p.id() + 1000, 1, false,
      p.tokenHigh(), p.tokenLow());
    assertEquals(FailureCode.NOT_FOUND, failure(device.replay(forged)).code());
    PipelineHandle foreign = new PipelineHandle("elsewhere", p.device(), p.generation(), p.id(), 1, false,
      p.tokenHigh(), p.tokenLow());
    assertEquals(FailureCode.BAD_REQUEST, failure(device.replay(foreign)).code());
    // The buffers live on and free normally.
    await(device.free(b.x));
  }

  @Test
  void aPipelineHandleWithoutItsTokenIsForbidden() {
    Buffers b = new Buffers();
    float[] before = readF32(b.x);
    PipelineHandle p = await(recorder(tenSteps(b)).build());
    // All a log or a metric shows of it (node, device, generation, id), with a guessed token.
    PipelineHandle guessed = new PipelineHandle(p.node(), p.device(), p.generation(), p.id(), p.steps(),
      p.captured(), p.tokenHigh() ^ 1, p.tokenLow());
    assertEquals(FailureCode.FORBIDDEN, failure(device.replay(guessed)).code());
    assertEquals(FailureCode.FORBIDDEN, failure(device.release(guessed)).code());
    assertArrayEquals(before, readF32(b.x), "a step of the pipeline ran for a handle without its token");
    // The handle its recording answered, and its JSON form, carry the token.
    PipelineHandle copied = new PipelineHandle(p.toJson());
    assertEquals(p, copied);
    await(device.replay(copied));
    await(device.release(p));
    await(device.free(b.x));
  }

  @Test
  void aRebuiltContextMakesPipelinesStale() {
    Assumptions.assumeTrue(TestDevices.poisonRebuilds(), TestDevices.POISON_ENDS_CUDA);
    Buffers b = new Buffers();
    PipelineHandle p = await(recorder(tenSteps(b)).build());
    poisonAndAwaitTheNextGeneration();
    CudaException e = failure(device.replay(p));
    assertEquals(FailureCode.STALE_HANDLE, e.code(), e.getMessage());
    assertEquals(FailureCode.STALE_HANDLE, failure(device.release(p)).code());
  }
}
