package com.vertxcuda.blas;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.FailureCode;
import com.vertxcuda.library.HostDeviceTest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A coalescing BLAS client: requests made in one event-loop task travel as one {@link BlasBatch};
 * each future gets its own outcome, same-shaped GEMMs run batched, order within the batch holds, a
 * bad request fails alone. Runs on the host backend in CI (both isolation modes) and on cuda on the H200.
 */
class CoalescingClientTest extends HostDeviceTest {

  static final int N = 12;

  private BlasClient coalescing(int max) {
    return BlasClient.create(vertx, new DeviceClientOptions(),
      new BlasClientOptions().setCoalesce(true).setMaxCoalesced(max));
  }

  /** Makes the requests inside one event-loop task, as a handler would, and returns their futures. */
  private <T> List<Future<T>> inOneTask(List<Supplier<Future<T>>> calls) {
    Promise<List<Future<T>>> made = Promise.promise();
    vertx.runOnContext(v -> {
      List<Future<T>> futures = new ArrayList<>();
      calls.forEach(c -> futures.add(c.get()));
      made.complete(futures);
    });
    return await(made.future());
  }

  private static BlasRequest gemm(BufferHandle a, BufferHandle b, BufferHandle c) {
    return new BlasRequest(BlasOp.GEMM).setM(N).setN(N).setK(N).setAlpha(1.25).setA(a).setLda(N).setB(b).setLdb(N)
      .setBeta(0.5).setC(c).setLdc(N);
  }

  private static void assertClose(double[] expected, float[] got, String what) {
    assertEquals(expected.length, got.length, what);
    for (int i = 0; i < expected.length; i++) {
      assertEquals(expected[i], got[i], 1e-4, what + " element " + i);
    }
  }

  /**
   * A request to another client made later in the same task leaves after the held ones: the
   * download of a coalesced GEMM's output sees the GEMM's result (it used to overtake it). Two
   * coalescing clients interleaved in one task keep their order too.
   */
  @Test
  void requestsLeaveInTheOrderTheyWereMadeAcrossClients() {
    BlasClient first = coalescing(512);
    BlasClient second = coalescing(512);
    float[] a = floats(values(N * N, 1));
    float[] b = floats(values(N * N, 2));
    float[] c = floats(values(N * N, 3));
    BufferHandle ha = f32(a);
    BufferHandle hb = f32(b);
    BufferHandle hc = f32(c);
    double[] once = BlasVerticleTest.gemmReference(Transpose.N, Transpose.N, N, N, N, 1.25, widen(a), N, widen(b), N,
      0.5, widen(c), N);
    double[] twice = BlasVerticleTest.gemmReference(Transpose.N, Transpose.N, N, N, N, 1.25, widen(a), N, widen(b), N,
      0.5, once, N);
    Promise<io.vertx.core.buffer.Buffer> downloaded = Promise.promise();
    Promise<Double> scaled = Promise.promise();
    vertx.runOnContext(v -> {
      first.execute(gemm(ha, hb, hc));                        // C = 1.25 AB + 0.5 C
      device.download(hc).onComplete(downloaded);              // sees the first GEMM only
      second.execute(gemm(ha, hb, hc));                       // C = 1.25 AB + 0.5 C again
      first.execute(new BlasRequest(BlasOp.NRM2).setN(N * N).setX(hc).setIncx(1))
        .map(BlasReply::getValue).onComplete(scaled);         // after both GEMMs
    });
    io.vertx.core.buffer.Buffer after = await(downloaded.future());
    float[] got = new float[N * N];
    for (int i = 0; i < got.length; i++) {
      got[i] = after.getFloatLE(i * 4);
    }
    assertClose(once, got, "the download after the first coalesced GEMM");
    double norm = 0;
    for (double x : twice) {
      norm += x * x;
    }
    assertEquals(Math.sqrt(norm), await(scaled.future()), 1e-3 * Math.sqrt(norm), "nrm2 after both GEMMs");
    assertClose(twice, readF32(hc), "C after both GEMMs");
  }

  @Test
  void gemmsOfOneTaskRunAsOneBatchAndEachGetsItsResult() {
    int count = 10;
    BlasClient client = coalescing(512);
    List<double[]> expected = new ArrayList<>();
    List<BufferHandle> cs = new ArrayList<>();
    List<Supplier<Future<BlasReply>>> calls = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      float[] a = floats(values(N * N, 10 + i));
      float[] b = floats(values(N * N, 40 + i));
      float[] c = floats(values(N * N, 70 + i));
      BufferHandle ha = f32(a);
      BufferHandle hb = f32(b);
      BufferHandle hc = f32(c);
      cs.add(hc);
      expected.add(BlasVerticleTest.gemmReference(Transpose.N, Transpose.N, N, N, N, 1.25, widen(a), N, widen(b), N,
        0.5, widen(c), N));
      calls.add(() -> client.execute(gemm(ha, hb, hc)));
    }
    List<Future<BlasReply>> replies = inOneTask(calls);
    await(Future.all(replies));
    for (int i = 0; i < count; i++) {
      BlasReply r = replies.get(i).result();
      assertEquals(cs.get(i), r.getOutput(), "request " + i + " answers its own output");
      assertEquals(count, r.getBatchSize(), "request " + i + " ran in one batched call of all " + count);
      assertClose(expected.get(i), readF32(cs.get(i)), "request " + i);
    }
  }

  @Test
  void aBadRequestFailsAloneAndTheOthersRun() {
    BlasClient client = coalescing(512);
    float[] a = floats(values(N * N, 1));
    float[] b = floats(values(N * N, 2));
    BufferHandle ha = f32(a);
    BufferHandle hb = f32(b);
    BufferHandle c1 = f32(new float[N * N]);
    BufferHandle c2 = f32(new float[N * N]);
    List<Future<BlasReply>> replies = inOneTask(List.of(
      () -> client.execute(gemm(ha, hb, c1)),
      () -> client.execute(gemm(ha, hb, c2).setLdc(N - 1)),
      () -> client.execute(gemm(ha, hb, c2))));
    await(Future.join(replies).otherwiseEmpty());
    assertTrue(replies.get(0).succeeded());
    assertBadRequest(replies.get(1), "ldc");
    assertTrue(replies.get(2).succeeded());
    double[] expected = BlasVerticleTest.gemmReference(Transpose.N, Transpose.N, N, N, N, 1.25, widen(a), N, widen(b),
      N, 0.5, new double[N * N], N);
    assertClose(expected, readF32(c1), "first");
    assertClose(expected, readF32(c2), "third");
  }

  @Test
  void requestsOfABatchRunInTheirOrder() {
    BlasClient client = coalescing(512);
    float[] a = floats(values(N * N, 5));
    float[] b = floats(values(N * N, 6));
    BufferHandle ha = f32(a);
    BufferHandle hb = f32(b);
    BufferHandle c = f32(new float[N * N]);
    BufferHandle y = f32(new float[N * N]);
    // GEMM into c, then y = 2 c + y (reads the GEMM's output), then c scaled (after the read), then a dot of y.
    List<Future<BlasReply>> replies = inOneTask(List.of(
      () -> client.execute(gemm(ha, hb, c)),
      () -> client.execute(new BlasRequest(BlasOp.AXPY).setN(N * N).setAlpha(2).setX(c).setY(y)),
      () -> client.execute(new BlasRequest(BlasOp.SCAL).setN(N * N).setAlpha(0).setX(c)),
      () -> client.execute(new BlasRequest(BlasOp.DOT).setN(N * N).setX(y).setY(y))));
    await(Future.all(replies));
    double[] g = BlasVerticleTest.gemmReference(Transpose.N, Transpose.N, N, N, N, 1.25, widen(a), N, widen(b), N, 0.5,
      new double[N * N], N);
    double dot = 0;
    for (int i = 0; i < g.length; i++) {
      g[i] *= 2;
      dot += g[i] * g[i];
    }
    assertClose(g, readF32(y), "y = 2 gemm");
    assertClose(new double[N * N], readF32(c), "c scaled to 0 after it was read");
    assertEquals(dot, replies.get(3).result().getValue(), 1e-3 * Math.abs(dot), "dot comes back in its own reply");
  }

  @Test
  void aFullBatchLeavesAtOnceAndTheRestFollows() {
    BlasClient client = coalescing(4);
    BufferHandle ha = f32(floats(values(N * N, 7)));
    BufferHandle hb = f32(floats(values(N * N, 8)));
    List<Supplier<Future<BlasReply>>> calls = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      BufferHandle c = f32(new float[N * N]);
      calls.add(() -> client.execute(gemm(ha, hb, c)));
    }
    List<Future<BlasReply>> replies = inOneTask(calls);
    await(Future.all(replies));
    for (int i = 0; i < 10; i++) {
      // 10 requests, at most 4 per message: messages of 4, 4 and 2. The device holds a message's GEMMs
      // as if each had come alone, so each shares a batched call with at least its own message's,
      // and with the next messages' when they arrive before the queue runs dry (one batched call
      // per message was 2-5x slower).
      int batch = replies.get(i).result().getBatchSize();
      assertTrue(batch >= (i < 8 ? 4 : 2) && batch <= 10, "request " + i + " ran in a batch of " + batch);
    }
  }

  @Test
  void aBatchMessageAnswersEachRequestInOrder() {
    BufferHandle x = f32(1, 2, 3);
    BlasBatchReply reply = await(blas.executeBatch(new BlasBatch(List.of(
      new BlasRequest(BlasOp.NRM2).setN(3).setX(x),
      new BlasRequest(BlasOp.ASUM).setN(4).setX(x),
      new BlasRequest(BlasOp.IAMAX).setN(3).setX(x)))));
    assertEquals(3, reply.getOutcomes().size());
    assertEquals(Math.sqrt(14), reply.getOutcomes().get(0).getReply().getValue(), 1e-6);
    BlasOutcome bad = reply.getOutcomes().get(1);
    assertEquals(FailureCode.BAD_REQUEST, bad.getFailureCode());
    assertNull(bad.getReply());
    assertTrue(bad.getFailure().contains("x"), bad.getFailure());
    assertEquals(3, reply.getOutcomes().get(2).getReply().getIndex());
    assertEquals(0, await(blas.executeBatch(new BlasBatch(List.of()))).getOutcomes().size());
  }

  @Test
  void aMissingRequestInABatchFailsAlone() {
    BufferHandle x = f32(3, 4);
    BlasBatchReply reply = await(blas.executeBatch(new BlasBatch(java.util.Arrays.asList(
      new BlasRequest(BlasOp.NRM2).setN(2).setX(x), null, new BlasRequest(BlasOp.ASUM).setN(2).setX(x)))));
    assertEquals(5, reply.getOutcomes().get(0).getReply().getValue(), 1e-6);
    assertEquals(FailureCode.BAD_REQUEST, reply.getOutcomes().get(1).getFailureCode());
    assertTrue(reply.getOutcomes().get(1).getFailure().contains("requests[1]"), reply.getOutcomes().get(1).getFailure());
    assertEquals(7, reply.getOutcomes().get(2).getReply().getValue(), 1e-6);
  }

  /** More requests than a batch may carry: BAD_REQUEST in both isolation modes, and the device serves on. */
  @Test
  void aBatchTooLongFailsAloneAndTheDeviceServesOn() {
    List<BlasRequest> tooMany = java.util.Collections.nCopies(BlasBatch.MAX_REQUESTS + 1, null);
    CudaException e = failure(blas.executeBatch(new BlasBatch(tooMany)));
    assertEquals(FailureCode.BAD_REQUEST, e.code(), e.getMessage());
    BufferHandle x = f32(3, 4);
    assertEquals(5, await(blas.nrm2(2, x, 1)), 1e-6);
  }

  @Test
  void optionsRejectABatchSizeOutOfRange() {
    assertThrows(IllegalArgumentException.class, () -> new BlasClientOptions().setMaxCoalesced(0));
    CudaException e = failure(coalescing(2).execute(new BlasRequest(BlasOp.NRM2).setN(1).setX(null)));
    assertEquals(FailureCode.BAD_REQUEST, e.code());
  }
}
