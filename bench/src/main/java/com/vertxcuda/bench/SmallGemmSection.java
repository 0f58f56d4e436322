package com.vertxcuda.bench;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.bench.result.Series;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.blas.BlasClientOptions;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.blas.Transpose;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.Arrays;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasHandle;
import jcuda.jcublas.cublasOperation;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntConsumer;

import static com.vertxcuda.bench.Await.await;

/**
 * Sweep {@code smallgemm.batch}: 64x64 SGEMMs per second against how many travel in one message —
 * a coalescing BLAS client sending each handler's requests as one message of up to that many (1: a
 * plain client, one message each), the device batching what it finds queued — from one event loop
 * and from four; and the like-for-like call of a batch, one {@code GEMM_STRIDED_BATCHED} request of
 * that many ("strided batched", eight requests in flight from one event loop). Raw JCuda: one
 * {@code cublasSgemm} per GEMM at 1, {@code cublasSgemmStridedBatched} of that many otherwise, back
 * to back with one synchronize.
 */
final class SmallGemmSection implements Section {

  static final String SWEEP = "smallgemm.batch";
  /**
   * The matrices' size: 64, or {@code -Dvertxcuda.bench.smallGemmN} (1 on the host backend measures
   * the toolkit's own cost per GEMM, which the host's arithmetic on 64x64 matrices would hide).
   */
  private static final int N = Integer.getInteger("vertxcuda.bench.smallGemmN", 64);
  /**
   * For a profile of a few points: {@code -Dvertxcuda.bench.coalesce=1,4} measures only those
   * GEMMs per message, {@code -Dvertxcuda.bench.smallGemms=N} times N GEMMs a point (a profiler
   * wants seconds of one point, not a sweep).
   */
  private static final String COALESCE = System.getProperty("vertxcuda.bench.coalesce");
  private static final Integer SMALL_GEMMS = Integer.getInteger("vertxcuda.bench.smallGemms");

  private static List<Integer> coalesce(Bench bench) {
    if (COALESCE == null) {
      return bench.sizes.coalesce();
    }
    return Arrays.stream(COALESCE.split(",")).map(String::trim).map(Integer::valueOf).toList();
  }

  private static int smallGemms(Bench bench) {
    return SMALL_GEMMS == null ? bench.sizes.smallGemms() : SMALL_GEMMS;
  }

  @Override
  public String name() {
    return "smallgemm";
  }

  @Override
  public void raw(Bench bench, RawJCuda raw) {
    int most = coalesce(bench).stream().mapToInt(Integer::intValue).max().orElse(1);
    long stride = (long) N * N;
    CUdeviceptr a = raw.alloc(most * stride * 4);
    CUdeviceptr b = raw.alloc(most * stride * 4);
    CUdeviceptr c = raw.alloc(most * stride * 4);
    cublasHandle blas = raw.blas();
    Pointer one = Pointer.to(new float[] {1f});
    Pointer zero = Pointer.to(new float[] {0f});
    Series s = series(bench, "raw-jcuda", "one thread");
    int op = cublasOperation.CUBLAS_OP_N;
    for (int batch : coalesce(bench)) {
      if (!bench.inBudget(SWEEP, s.path(), "batch " + batch)) {
        break;
      }
      Runnable call = batch == 1
        ? () -> JCublas2.cublasSgemm(blas, op, op, N, N, N, one, a, N, b, N, zero, c, N)
        : () -> JCublas2.cublasSgemmStridedBatched(blas, op, op, N, N, N, one, a, N, stride, b, N, stride, zero, c, N,
          stride, batch);
      int calls = Math.max(1, smallGemms(bench) / batch);
      for (int i = 0; i < Math.max(1, calls / 10); i++) {
        call.run();
      }
      raw.sync();
      // The headlines: one GEMM a call, and the largest batch.
      long[] nanos = new long[batch == 1 || batch == most ? Bench.REPEATS : 1];
      for (int r = 0; r < nanos.length; r++) {
        long t0 = System.nanoTime();
        for (int i = 0; i < calls; i++) {
          call.run();
        }
        raw.sync();
        nanos[r] = System.nanoTime() - t0;
      }
      bench.rate(s, batch, "batch " + batch, (long) calls * batch, calls / 10, nanos);
    }
    raw.free(a);
    raw.free(b);
    raw.free(c);
  }

  @Override
  public void toolkit(Bench bench, DeployedDevice d) throws Exception {
    BufferHandle a = await(d.device.alloc(DType.F32, N * N));
    BufferHandle b = await(d.device.alloc(DType.F32, N * N));
    await(d.device.fill(a, 1.0));
    await(d.device.fill(b, 1.0));
    for (int loops : new int[] {1, 4}) {
      Series s = series(bench, d.path, loops == 1 ? "1 event loop" : loops + " event loops");
      for (int batch : coalesce(bench)) {
        if (!bench.inBudget(SWEEP, s.path(), s.variant() + ", batch " + batch)) {
          break;
        }
        BlasClientOptions coalescing = new BlasClientOptions().setCoalesce(batch > 1).setMaxCoalesced(Math.max(1, batch));
        List<BlasClient> clients = new ArrayList<>();
        for (int i = 0; i < loops; i++) {
          clients.add(BlasClient.create(d.vertx, new DeviceClientOptions(), coalescing));
        }
        int inFlight = Math.max(256, 4 * batch);
        List<BufferHandle> outputs = new ArrayList<>();
        for (int i = 0; i < inFlight * loops; i++) {
          outputs.add(await(d.device.alloc(DType.F32, N * N)));
        }
        int total = smallGemms(bench);
        // As many untimed as timed: each point's own path (a coalescing group, the batch reply) is
        // compiled before it is timed; with a short warmup a short point times the JIT, not the path.
        int warmup = total;
        runGemms(d.vertx, clients, a, b, outputs, warmup, batch);
        // Every point three times: each carries a goal (no coalesced size below one a message; four
        // loops at 2M/s), and one timing of a point varies too much between runs to judge it by.
        long[] nanos = new long[Bench.REPEATS];
        Batches batches = Batches.NONE;
        Map<String, Long> cpuBefore = ThreadCpu.snapshot();
        for (int r = 0; r < nanos.length; r++) {
          long t0 = System.nanoTime();
          Batches run = runGemms(d.vertx, clients, a, b, outputs, total, batch);
          nanos[r] = System.nanoTime() - t0;
          batches = batches.and(run);
        }
        // Which thread the rate is bound by: each busy thread's CPU per GEMM over the timed runs.
        JsonObject cpu = ThreadCpu.perUnit(cpuBefore, ThreadCpu.snapshot(), (long) total * nanos.length,
          Arrays.stream(nanos).sum());
        // The device's batched calls as its replies report them: the largest, and the mean a GEMM ran in
        // (sum of each GEMM's batch over the GEMMs: many small launches pull it down).
        double meanBatch = Series.round(batches.sum() / (double) ((long) total * nanos.length));
        bench.progress("%-22s %-18s %-10s %12s: device batches mean %.1f, largest %d; CPU us per GEMM %s", SWEEP,
          s.path(), s.variant(), "batch " + batch, meanBatch, batches.largest(), cpu.encode());
        JsonObject p = bench.rate(s, batch, "batch " + batch, total, warmup, nanos);
        p.put("extra", new JsonObject().put("largestBatch", batches.largest()).put("meanBatch", meanBatch)
          .put("inFlight", inFlight * loops).put("cpuMicrosPerGemm", cpu));
        for (BufferHandle h : outputs) {
          await(d.device.free(h));
        }
      }
    }
    await(d.device.free(a));
    await(d.device.free(b));
    stridedBatched(bench, d);
  }

  /** One GEMM_STRIDED_BATCHED request per batch, {@link #STRIDED_IN_FLIGHT} in flight from one event loop. */
  private static void stridedBatched(Bench bench, DeployedDevice d) throws Exception {
    Series s = series(bench, d.path, "strided batched");
    BlasClient blas = BlasClient.create(d.vertx, new DeviceClientOptions());
    long stride = (long) N * N;
    int most = coalesce(bench).stream().mapToInt(Integer::intValue).max().orElse(1);
    for (int batch : coalesce(bench)) {
      if (batch == 1) {
        continue; // one GEMM a request is the plain client's point
      }
      if (!bench.inBudget(SWEEP, s.path(), s.variant() + ", batch " + batch)) {
        break;
      }
      BufferHandle a = await(d.device.alloc(DType.F32, batch * stride));
      BufferHandle b = await(d.device.alloc(DType.F32, batch * stride));
      List<BufferHandle> outputs = new ArrayList<>();
      for (int i = 0; i < STRIDED_IN_FLIGHT; i++) {
        outputs.add(await(d.device.alloc(DType.F32, batch * stride)));
      }
      await(d.device.fill(a, 1.0));
      await(d.device.fill(b, 1.0));
      int calls = Math.max(STRIDED_IN_FLIGHT, smallGemms(bench) / batch);
      int warmup = Math.max(1, calls / 10);
      runStrided(d.vertx, blas, a, b, outputs, warmup, batch, stride);
      // The headline: the largest batch.
      long[] nanos = new long[batch == most ? Bench.REPEATS : 1];
      for (int r = 0; r < nanos.length; r++) {
        long t0 = System.nanoTime();
        runStrided(d.vertx, blas, a, b, outputs, calls, batch, stride);
        nanos[r] = System.nanoTime() - t0;
      }
      JsonObject p = bench.rate(s, batch, "batch " + batch, (long) calls * batch, (long) warmup * batch, nanos);
      p.put("extra", new JsonObject().put("requests", calls).put("inFlight", STRIDED_IN_FLIGHT));
      for (BufferHandle h : outputs) {
        await(d.device.free(h));
      }
      await(d.device.free(a));
      await(d.device.free(b));
    }
  }

  private static final int STRIDED_IN_FLIGHT = 8;

  private static void runStrided(Vertx vertx, BlasClient blas, BufferHandle a, BufferHandle b, List<BufferHandle> outputs,
                                 int total, int batch, long stride) throws Exception {
    Promise<Void> done = Promise.promise();
    int[] sent = {0};
    int[] completed = {0};
    IntConsumer[] issue = new IntConsumer[1];
    issue[0] = slot -> {
      if (sent[0] == total) {
        return;
      }
      sent[0]++;
      blas.gemmStridedBatched(Transpose.N, Transpose.N, N, N, N, 1.0, a, N, stride, b, N, stride, 0.0,
        outputs.get(slot), N, stride, batch).onComplete(ar -> {
          if (ar.failed()) {
            done.tryFail(ar.cause());
          } else if (++completed[0] == total) {
            done.tryComplete();
          } else {
            issue[0].accept(slot);
          }
        });
    };
    vertx.getOrCreateContext().runOnContext(x -> {
      for (int slot = 0; slot < outputs.size(); slot++) {
        issue[0].accept(slot);
      }
    });
    await(done.future());
  }

  private static Series series(Bench bench, String path, String variant) {
    return bench.record.series(SWEEP, path, variant, "rate", "1/s", "GEMMs per message", "");
  }

  /**
   * {@code total} GEMMs from {@code clients.size()} event loops (one client each), the outputs shared
   * out among them, each on its own output: a request that completes frees its slot for the next one,
   * made in the completion's task. The first ones are made {@code perTask} to a task (a coalescing
   * client sends each task's requests as one message). Returns the batches the replies reported.
   */
  private static Batches runGemms(Vertx vertx, List<BlasClient> clients, BufferHandle a, BufferHandle b,
                                  List<BufferHandle> outputs, int total, int perTask) throws Exception {
    int share = outputs.size() / clients.size();
    List<Future<Batches>> all = new ArrayList<>();
    for (int i = 0; i < clients.size(); i++) {
      int requests = total / clients.size() + (i < total % clients.size() ? 1 : 0);
      all.add(runGemms(vertx, clients.get(i), a, b, outputs.subList(i * share, (i + 1) * share), requests, perTask));
    }
    await(Future.all(all));
    return all.stream().map(Future::result).reduce(Batches.NONE, Batches::and);
  }

  /** The device's batched calls as replies reported them: the largest, and the sum over the replies. */
  private record Batches(long largest, long sum) {
    static final Batches NONE = new Batches(0, 0);

    Batches and(Batches other) {
      return new Batches(Math.max(largest, other.largest), sum + other.sum);
    }
  }

  /** One client's part, on an event-loop context of its own. */
  private static Future<Batches> runGemms(Vertx vertx, BlasClient blas, BufferHandle a, BufferHandle b,
                                          List<BufferHandle> outputs, int total, int perTask) {
    Promise<Batches> done = Promise.promise();
    int[] sent = {0};
    int[] completed = {0};
    long[] largestAndSum = {0, 0}; // plain longs: nothing allocated per reply on the measured loop
    // From a thread outside Vert.x, each new context is on the next event loop in turn.
    Context context = vertx.getOrCreateContext();
    IntConsumer[] issue = new IntConsumer[1];
    issue[0] = slot -> {
      if (sent[0] == total) {
        return;
      }
      sent[0]++;
      blas.execute(new BlasRequest(BlasOp.GEMM).setM(N).setN(N).setK(N).setA(a).setLda(N).setB(b).setLdb(N)
        .setC(outputs.get(slot)).setLdc(N)).onComplete(ar -> {
          if (ar.failed()) {
            done.tryFail(ar.cause());
            return;
          }
          int size = ar.result().getBatchSize();
          largestAndSum[0] = Math.max(largestAndSum[0], size);
          largestAndSum[1] += size;
          if (++completed[0] == total) {
            done.tryComplete(new Batches(largestAndSum[0], largestAndSum[1]));
          } else {
            issue[0].accept(slot);
          }
        });
    };
    if (total == 0) {
      done.tryComplete(Batches.NONE);
    }
    for (int from = 0; from < outputs.size(); from += perTask) {
      int first = from;
      context.runOnContext(x -> {
        for (int slot = first; slot < Math.min(outputs.size(), first + perTask); slot++) {
          issue[0].accept(slot);
        }
      });
    }
    return done.future();
  }
}
