package com.vertxcuda.bench;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.bench.result.Series;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.blas.BlasClientOptions;
import com.vertxcuda.blas.BlasComputeType;
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
import jcuda.Sizeof;
import jcuda.cudaDataType;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasGemmAlgo;
import jcuda.jcublas.cublasHandle;
import jcuda.jcublas.cublasMath;
import jcuda.jcublas.cublasOperation;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntConsumer;
import java.util.function.IntFunction;

import static com.vertxcuda.bench.Await.await;

/**
 * Sweep {@code smallgemm.batch}: 64x64 SGEMMs per second against how many travel in one message —
 * a coalescing BLAS client sending each handler's requests as one message of up to that many (1: a
 * plain client, one message each), the device batching what it finds queued — from one event loop
 * and from four; and the like-for-like call of a batch, one {@code GEMM_STRIDED_BATCHED} request of
 * that many ("strided batched", eight requests in flight from one event loop). Raw JCuda: one
 * {@code cublasSgemm} per GEMM at 1, {@code cublasSgemmStridedBatched} of that many otherwise, back
 * to back with one synchronize. And sweep {@code gemm.batched}: the pointer-array batched GEMM
 * ({@link SweepSizes#batchedGemms()}: F32, members anywhere), one call at a time, GEMMs per second: the
 * toolkit's GEMM_BATCHED_EX request over views against raw {@code cublasGemmBatchedEx}.
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
  public void raw(Bench bench, RawJCuda raw) throws Exception {
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
    pointerBatched(bench, raw);
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
    pointerBatched(bench, d);
  }

  /**
   * {@code gemm.batched} through raw JCuda: one {@code cublasGemmBatchedEx} (F32 data and compute,
   * as the engine calls it) over device arrays of the members' pointers, each member a matrix of its
   * own, a synchronize after each call.
   */
  private static void pointerBatched(Bench bench, RawJCuda raw) throws Exception {
    cublasHandle blas = raw.blas();
    // F32 compute in default math: under TF32 math cuBLAS would run CUDA_R_32F on tensor cores.
    JCublas2.cublasSetMathMode(blas, cublasMath.CUBLAS_DEFAULT_MATH);
    Pointer one = Pointer.to(new float[] {1f});
    Pointer zero = Pointer.to(new float[] {0f});
    int op = cublasOperation.CUBLAS_OP_N;
    int f32 = cudaDataType.CUDA_R_32F;
    for (SweepSizes.BatchedGemm g : bench.sizes.batchedGemms()) {
      Series s = batchedSeries(bench, "raw-jcuda", g);
      if (!bench.inBudget(BATCHED, s.path(), g.variant() + " x " + g.members())) {
        break;
      }
      int n = g.n();
      List<CUdeviceptr> all = new ArrayList<>();
      CUdeviceptr[] arrays = new CUdeviceptr[3];
      for (int operand = 0; operand < 3; operand++) {
        CUdeviceptr[] members = new CUdeviceptr[g.members()];
        for (int i = 0; i < members.length; i++) {
          members[i] = raw.alloc((long) n * n * Sizeof.FLOAT);
          JCudaDriver.cuMemsetD32(members[i], Float.floatToIntBits(operand == 1 ? 0.5f : 1f), (long) n * n);
          all.add(members[i]);
        }
        arrays[operand] = raw.alloc((long) members.length * Sizeof.POINTER);
        JCudaDriver.cuMemcpyHtoD(arrays[operand], Pointer.to(members), (long) members.length * Sizeof.POINTER);
        all.add(arrays[operand]);
      }
      Histograms.Op once = i -> {
        JCublas2.cublasGemmBatchedEx(blas, op, op, n, n, n, one, arrays[0], f32, n, arrays[1], f32, n, zero, arrays[2],
          f32, n, g.members(), f32, cublasGemmAlgo.CUBLAS_GEMM_DEFAULT);
        raw.sync();
      };
      Plan plan = bench.plan(Histograms.loop(new Plan(0, 3), once).getMinValue());
      bench.perRun(s, g.members(), g.variant() + " x " + g.members(), g.members(), plan,
        Bench.measure(true, () -> Histograms.loop(plan, once)));
      all.forEach(raw::free);
    }
  }

  /**
   * {@code gemm.batched} through the toolkit: one GEMM_BATCHED_EX request (F32 data and compute) at a
   * time, its members views of one buffer per operand, each answered before the next.
   */
  private static void pointerBatched(Bench bench, DeployedDevice d) throws Exception {
    for (SweepSizes.BatchedGemm g : bench.sizes.batchedGemms()) {
      Series s = batchedSeries(bench, d.path, g);
      if (!bench.inBudget(BATCHED, s.path(), g.variant() + " x " + g.members())) {
        break;
      }
      int n = g.n();
      long elements = (long) n * n;
      BufferHandle a = await(d.device.alloc(DType.F32, elements * g.members()));
      BufferHandle b = await(d.device.alloc(DType.F32, elements * g.members()));
      BufferHandle c = await(d.device.allocUninitialized(DType.F32, elements * g.members()));
      await(d.device.fill(a, 1.0));
      await(d.device.fill(b, 0.5));
      List<BufferHandle> as = new ArrayList<>();
      List<BufferHandle> bs = new ArrayList<>();
      List<BufferHandle> cs = new ArrayList<>();
      for (int i = 0; i < g.members(); i++) {
        as.add(a.view(i * elements, elements));
        bs.add(b.view(i * elements, elements));
        cs.add(c.view(i * elements, elements));
      }
      IntFunction<Future<?>> call = i -> d.blas.gemmBatchedEx(Transpose.N, Transpose.N, n, n, n, 1.0, as, n, bs, n, 0.0,
        cs, n, BlasComputeType.F32);
      Plan plan = bench.plan(Histograms.sequential(d.vertx, new Plan(0, 3), call).getMinValue());
      bench.perRun(s, g.members(), g.variant() + " x " + g.members(), g.members(), plan,
        Bench.measure(true, () -> Histograms.sequential(d.vertx, plan, call)));
      for (BufferHandle h : List.of(a, b, c)) {
        await(d.device.free(h));
      }
    }
  }

  /** The sweep of pointer-array batched GEMMs: GEMMs per second, one batched call at a time. */
  static final String BATCHED = "gemm.batched";

  private static Series batchedSeries(Bench bench, String path, SweepSizes.BatchedGemm g) {
    return bench.record.series(BATCHED, path, g.variant(), "rate", "1/s", "GEMMs per call", "");
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
