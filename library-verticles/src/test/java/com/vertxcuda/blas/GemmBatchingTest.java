package com.vertxcuda.blas;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.TestDevices;
import com.vertxcuda.library.HostDeviceTest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Small GEMMs the device serves one after another run as one batched call, with no window: each
 * request still gets its own product, a request that depends on a held GEMM sees its result, and
 * GEMMs that share an output do not share a call.
 */
class GemmBatchingTest extends HostDeviceTest {

  @Override
  protected boolean devicePerTest() {
    return true; // a test undeploys the device
  }

  static final int N = 64;
  static final int MAX_BATCH = 16;

  @Override
  protected DeviceOptions options() {
    return TestDevices.options().setLibraryOptions(new JsonObject()
      .put("blas", new BlasOptions().setMaxBatchSize(MAX_BATCH).toJson()));
  }

  private static BlasRequest gemm(BufferHandle a, BufferHandle b, BufferHandle c, double alpha, double beta) {
    return new BlasRequest(BlasOp.GEMM).setM(N).setN(N).setK(N).setAlpha(alpha).setA(a).setLda(N).setB(b).setLdb(N)
      .setBeta(beta).setC(c).setLdc(N);
  }

  private static double[] product(double[] a, double[] b, double alpha) {
    return BlasVerticleTest.gemmReference(Transpose.N, Transpose.N, N, N, N, alpha, a, N, b, N, 0,
      new double[N * N], N);
  }

  @Test
  void gemmsSentTogetherFromOneEventLoopBatchAndEachGetsItsProduct() {
    int count = 256;
    int size = N * N;
    double[] as = widen(floats(values(count * size, 7)));
    double[] b = widen(floats(values(size, 8)));
    BufferHandle ha = f32(floats(as));
    BufferHandle hb = f32(floats(b));
    List<Future<BufferHandle>> allocs = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      allocs.add(device.alloc(DType.F32, size));
    }
    await(Future.all(allocs));
    List<BufferHandle> cs = allocs.stream().map(Future::result).toList();

    Promise<List<Future<BlasReply>>> sent = Promise.promise();
    vertx.runOnContext(v -> {
      List<Future<BlasReply>> replies = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        replies.add(blas.execute(gemm(ha.view((long) i * size, size), hb, cs.get(i), 1, 0)));
      }
      sent.complete(replies);
    });
    List<Future<BlasReply>> replies = await(sent.future());
    await(Future.all(replies));

    int largest = 0;
    for (int i = 0; i < count; i++) {
      BlasReply r = replies.get(i).result();
      assertEquals(cs.get(i), r.getOutput(), "request " + i + " answers with its own output");
      assertTrue(r.getBatchSize() >= 1 && r.getBatchSize() <= MAX_BATCH, "batch size " + r.getBatchSize());
      largest = Math.max(largest, r.getBatchSize());
    }
    assertTrue(largest > 1, "consecutive GEMMs ran batched, largest batch " + largest);

    List<Future<Buffer>> downloads = new ArrayList<>();
    cs.forEach(c -> downloads.add(device.download(c)));
    await(Future.all(downloads));
    for (int i = 0; i < count; i++) {
      double[] a = java.util.Arrays.copyOfRange(as, i * size, (i + 1) * size);
      assertClose(product(a, b, 1), widen(TestDevices.floats(downloads.get(i).result())), 1e-5, "C" + i);
    }
  }

  @Test
  void batchedResultsEqualUnbatchedOnesBitForBit() {
    int count = 2 * MAX_BATCH;
    List<BufferHandle> as = new ArrayList<>();
    List<BufferHandle> bs = new ArrayList<>();
    List<BufferHandle> cs = new ArrayList<>();
    List<BufferHandle> refs = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      as.add(f32(floats(values(N * N, 100 + i))));
      bs.add(f32(floats(values(N * N, 200 + i))));
      cs.add(f32(floats(values(N * N, 300 + i))));
      refs.add(f32(floats(values(N * N, 300 + i))));
    }
    List<Future<BlasReply>> batched = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      batched.add(blas.execute(gemm(as.get(i), bs.get(i), cs.get(i), 0.75, 0.5)));
    }
    await(Future.all(batched));
    for (int i = 0; i < count; i++) {
      // A strided-batched call of one is never batched with others: the unbatched reference.
      BlasReply alone = await(blas.execute(gemm(as.get(i), bs.get(i), refs.get(i), 0.75, 0.5)
        .setOp(BlasOp.GEMM_STRIDED_BATCHED).setBatchCount(1)));
      assertEquals(1, alone.getBatchSize());
      float[] expected = readF32(refs.get(i));
      float[] got = readF32(cs.get(i));
      if (TestDevices.backend() == BackendKind.HOST) {
        assertArrayEquals(expected, got, "request " + i + " (batch of " + batched.get(i).result().getBatchSize() + ")");
      } else {
        // cuBLAS's batched kernels sum in another order than its single-GEMM ones: results differed
        // by up to 3e-8 on the H200 (inputs of order 1, k = 16). Allow 1e-5 for k = 64.
        assertClose(widen(expected), widen(got), 1e-5, "request " + i);
      }
    }
  }

  @Test
  void requestsThatShareAnOutputAreNotBatchedTogether() {
    double[] a = widen(floats(values(N * N, 1)));
    double[] b = widen(floats(values(N * N, 2)));
    double[] c0 = widen(floats(values(N * N, 3)));
    BufferHandle ha = f32(floats(a));
    BufferHandle hb = f32(floats(b));
    BufferHandle c = f32(floats(c0));
    // C = AB + C twice: the second must see the first's result.
    Future<BlasReply> first = blas.execute(gemm(ha, hb, c, 1, 1));
    Future<BlasReply> second = blas.execute(gemm(ha, hb, c, 1, 1));
    await(Future.all(first, second));
    double[] ab = product(a, b, 1);
    double[] expected = new double[N * N];
    for (int i = 0; i < expected.length; i++) {
      expected[i] = c0[i] + 2 * ab[i];
    }
    assertClose(expected, widen(readF32(c)), 1e-5, "C + 2AB");
  }

  @Test
  void aRequestThatReadsAHeldGemmsOutputSeesItsResult() {
    double[] a = widen(floats(values(N * N, 4)));
    double[] b = widen(floats(values(N * N, 5)));
    BufferHandle ha = f32(floats(a));
    BufferHandle hb = f32(floats(b));
    BufferHandle c = f32(new float[N * N]);
    BufferHandle d = f32(new float[N * N]);
    // Sent right behind the GEMMs, without waiting: a BLAS request and a device download of their outputs.
    Future<BlasReply> product = blas.execute(gemm(ha, hb, c, 0.75, 0));
    Future<BlasReply> again = blas.execute(gemm(hb, ha, d, 1, 0));
    Future<Double> norm = blas.nrm2(N * N, c, 1);
    Future<Buffer> downloaded = device.download(d);
    double expected = 0;
    for (double v : product(a, b, 0.75)) {
      expected += v * v;
    }
    await(Future.all(product, again));
    assertEquals(Math.sqrt(expected), await(norm), 1e-3);
    double[] ba = BlasVerticleTest.gemmReference(Transpose.N, Transpose.N, N, N, N, 1, b, N, a, N, 0,
      new double[N * N], N);
    assertClose(ba, widen(TestDevices.floats(await(downloaded))), 1e-5, "BA");
  }

  /**
   * GEMMs held behind a batched call still running when the device is undeployed are answered
   * (CONTEXT_LOST, or their product if they ran), none left to its deadline.
   */
  @Test
  void gemmsHeldBehindARunningCallAreAnsweredWhenTheDeviceStops() {
    org.junit.jupiter.api.Assumptions.assumeTrue(TestDevices.backend() == BackendKind.HOST);
    int big = 256;
    BufferHandle bigA = f32(floats(values(big * big, 21)));
    List<BufferHandle> bigC = new ArrayList<>();
    for (int i = 0; i < MAX_BATCH; i++) {
      bigC.add(await(device.alloc(DType.F32, big * big)));
    }
    BufferHandle ha = f32(floats(values(N * N, 22)));
    List<BufferHandle> cs = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      cs.add(await(device.alloc(DType.F32, N * N)));
    }
    List<Future<BlasReply>> all = new ArrayList<>();
    Promise<Void> sent = Promise.promise();
    vertx.runOnContext(v -> {
      for (BufferHandle c : bigC) {
        all.add(blas.execute(new BlasRequest(BlasOp.GEMM).setM(big).setN(big).setK(big).setA(bigA).setLda(big)
          .setB(bigA).setLdb(big).setC(c).setLdc(big)));
      }
      // Each small one in a task of its own, a tick apart: each finds the queue dry and is held.
      long[] tick = {0};
      vertx.setPeriodic(1, 1, id -> {
        all.add(blas.execute(gemm(ha, ha, cs.get((int) tick[0]), 1, 0)));
        if (++tick[0] == cs.size()) {
          vertx.cancelTimer(id);
          sent.complete();
        }
      });
    });
    await(sent.future());
    await(vertx.undeploy(deployment));
    try {
      Future.join(all).toCompletionStage().toCompletableFuture().exceptionally(t -> null).get(20, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError("requests left unanswered after the device stopped", e);
    }
    List<String> answers = new ArrayList<>();
    for (Future<BlasReply> f : all) {
      assertTrue(f.isComplete(), "every request answered");
      answers.add(f.succeeded() ? "product" : String.valueOf(((com.vertxcuda.CudaException) f.cause()).code()));
    }
    assertTrue(answers.stream().allMatch(a -> a.equals("product") || a.equals("CONTEXT_LOST")), answers.toString());
    assertTrue(answers.subList(MAX_BATCH, answers.size()).contains("CONTEXT_LOST"),
      "some held GEMMs were still held when the device stopped: " + answers);
  }

  /**
   * Messages that reach the device one at a time, each finding its queue empty, while an earlier
   * batched call is still running: they wait for it and then run as one batched call, not one small
   * call each (four GEMMs a message left the queue dry between messages and ran in batches of 37 on
   * the H100, against 196 at one a message). Once the device is idle a GEMM waits for nothing.
   */
  @Test
  void gemmsArrivingWhileABatchRunsJoinOneCallWhenItEnds() {
    // Host only: the first call must outlast three timer ticks, which a GPU does not.
    org.junit.jupiter.api.Assumptions.assumeTrue(TestDevices.backend() == BackendKind.HOST);
    int big = 256;
    int bigCount = MAX_BATCH;
    BufferHandle bigA = f32(floats(values(big * big, 11)));
    BufferHandle bigB = f32(floats(values(big * big, 12)));
    List<BufferHandle> bigC = new ArrayList<>();
    for (int i = 0; i < bigCount; i++) {
      bigC.add(await(device.alloc(DType.F32, big * big)));
    }
    int messages = 3;
    int perMessage = 4;
    double[] a = widen(floats(values(N * N, 13)));
    double[] b = widen(floats(values(N * N, 14)));
    BufferHandle ha = f32(floats(a));
    BufferHandle hb = f32(floats(b));
    List<BufferHandle> cs = new ArrayList<>();
    for (int i = 0; i < messages * perMessage; i++) {
      cs.add(await(device.alloc(DType.F32, N * N)));
    }
    BlasClient coalescing = BlasClient.create(vertx, new com.vertxcuda.DeviceClientOptions(),
      new BlasClientOptions().setCoalesce(true));
    // The long first call: its GEMMs in one message, so they are one full group whatever the timing
    // (sent one a message they could reach a submission thread already looking, on a loaded host).
    List<BlasRequest> firstCall = new ArrayList<>();
    for (int i = 0; i < bigCount; i++) {
      firstCall.add(new BlasRequest(BlasOp.GEMM).setM(big).setN(big).setK(big).setA(bigA).setLda(big)
        .setB(bigB).setLdb(big).setC(bigC.get(i)).setLdc(big));
    }
    List<Future<com.vertxcuda.blas.BlasBatchReply>> first = new ArrayList<>();
    List<Future<BlasReply>> small = new ArrayList<>();
    Promise<Void> sent = Promise.promise();
    vertx.runOnContext(v -> {
      first.add(blas.executeBatch(new com.vertxcuda.blas.BlasBatch(firstCall)));
      // One message a timer tick: each reaches a device whose queue ran dry behind the first call.
      long[] tick = {0};
      vertx.setPeriodic(2, 2, id -> {
        int m = (int) tick[0]++;
        for (int j = 0; j < perMessage; j++) {
          small.add(coalescing.execute(gemm(ha, hb, cs.get(m * perMessage + j), 1, 0)));
        }
        if (tick[0] == messages) {
          vertx.cancelTimer(id);
          sent.complete();
        }
      });
    });
    await(sent.future());
    await(Future.all(small));
    List<com.vertxcuda.blas.BlasOutcome> firstReplies = await(first.get(0)).getOutcomes();
    assertEquals(bigCount, firstReplies.get(0).getReply().getBatchSize(), "the first call: one batch of " + bigCount);
    for (int i = 0; i < small.size(); i++) {
      assertEquals(messages * perMessage, small.get(i).result().getBatchSize(),
        "GEMM " + i + ": the three messages ran as one batched call");
    }
    double[] expected = product(a, b, 1);
    for (int i = 0; i < cs.size(); i++) {
      assertClose(expected, widen(readF32(cs.get(i))), 1e-5, "C" + i);
    }
    // An idle device: one GEMM alone, at once.
    assertEquals(1, await(coalescing.execute(gemm(ha, hb, cs.get(0), 1, 0))).getBatchSize());
  }
}
