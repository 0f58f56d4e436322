package com.vertxcuda.samples.bench;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.blas.BlasClientOptions;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasOptions;
import com.vertxcuda.blas.BlasReply;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.fft.FftClient;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftRequest;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.message.DeviceInfo;
import com.vertxcuda.rand.RandClient;
import com.vertxcuda.rand.RandRequest;
import com.vertxcuda.rand.RngType;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * Library throughput through the verticles, next to raw JCuda calls in the same process:
 * SGEMM 8192 FP32 and TF32, FFT C2C 2^20 x 64, uniform RNG 2^28, and 64x64 SGEMM throughput over
 * the event bus with dynamic batching off and on. On the host backend it runs small sizes and skips
 * the raw JCuda part.
 *
 * <p>Arguments: {@code [auto|cuda|host] [full|small] [auto|in_process|process]} (default: auto, full on
 * cuda, small on host, the isolation {@code auto} picks).
 */
public final class LibraryBench {

  /** Sizes of one run. */
  record Sizes(int gemm, int fftLength, int fftBatch, long rngCount, int repeats, int smallGemms) {
    static final Sizes FULL = new Sizes(8192, 1 << 20, 64, 1L << 28, 10, 100_000);
    static final Sizes SMALL = new Sizes(256, 1 << 12, 4, 1L << 20, 3, 10_000);

    // Warm-up and timed requests of each measurement; the raw JCuda run makes the same numbers of calls.
    Counts fp32() { return new Counts(2 * repeats, repeats); }
    Counts tf32() { return new Counts(20 * repeats, 5 * repeats); }
    Counts fft() { return new Counts(20 * repeats, 20 * repeats); }
    Counts rng() { return new Counts(20 * repeats, 20 * repeats); }
  }

  /** Warm-up calls, then timed calls. */
  record Counts(int warmUp, int timed) {
  }

  private LibraryBench() {
  }

  public static void main(String[] args) throws Exception {
    BackendKind backend = args.length > 0 ? BackendKind.valueOf(args[0].toUpperCase(Locale.ROOT)) : BackendKind.AUTO;
    Vertx vertx = Vertx.vertx();
    try {
      Isolation isolation = args.length > 2 ? Isolation.valueOf(args[2].toUpperCase(Locale.ROOT)) : Isolation.AUTO;
      DeviceOptions base = new DeviceOptions().setBackend(backend).setIsolation(isolation).setHostMemory(3L << 30);
      // For profiling the device host too (run.sh profile).
      String hostJvm = System.getProperty("vertxcuda.bench.deviceHostJvmOptions");
      if (hostJvm != null) {
        base.setDeviceHostJvmOptions(List.of(hostJvm.split(" ")));
      }
      // The device batches queued GEMMs by default: the first rows run without it.
      DeviceOptions unbatched = new DeviceOptions(base).setLibraryOptions(new JsonObject()
        .put("blas", new BlasOptions().setMaxBatchSize(1).toJson()));
      String deployment = await(vertx.deployVerticle(new DeviceVerticle(unbatched)));
      DeviceClient device = DeviceClient.create(vertx);
      awaitSpare(device, isolation);
      DeviceInfo info = await(device.describe());
      boolean cuda = "cuda".equals(info.getBackend());
      Sizes sizes = args.length > 1 && !args[1].equals("auto") ? (args[1].equals("small") ? Sizes.SMALL : Sizes.FULL)
        : cuda ? Sizes.FULL : Sizes.SMALL;
      System.out.printf("device: %s (%s backend, isolation %s), sizes: %s%n", info.getName(), info.getBackend(),
        isolation, sizes);
      List<String> rows = new ArrayList<>();
      boolean onlyGemms = Boolean.getBoolean("vertxcuda.bench.onlySmallGemms");
      if (!onlyGemms) {
        rows.addAll(viaVerticles(vertx, device, sizes));
      }
      List<BlasClient> plain = List.of(BlasClient.create(vertx));
      rows.add(smallGemms(vertx, device, plain, sizes, 256, 256, "64x64 SGEMM, batching off"));
      BlasClientOptions coalesce = new BlasClientOptions().setCoalesce(true).setMaxCoalesced(512);
      List<BlasClient> coalescing = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        coalescing.add(BlasClient.create(vertx, new DeviceClientOptions(), coalesce));
      }
      rows.add(smallGemms(vertx, device, coalescing.subList(0, 1), sizes, 2048, 512,
        "64x64 SGEMM, coalescing client (512 per message), batched on the device"));
      rows.add(smallGemms(vertx, device, coalescing, sizes, 4096, 512,
        "64x64 SGEMM, coalescing clients (512 per message), batched on the device"));
      await(vertx.undeploy(deployment));
      DeviceOptions batching = new DeviceOptions(base).setLibraryOptions(new JsonObject()
        .put("blas", new BlasOptions().setMaxBatchSize(64).toJson()));
      deployment = await(vertx.deployVerticle(new DeviceVerticle(batching)));
      awaitSpare(device, isolation);
      rows.add(smallGemms(vertx, device, plain, sizes, 256, 256, "64x64 SGEMM, queued GEMMs batched on the device (max 64)"));
      await(vertx.undeploy(deployment));
      if (cuda) {
        try {
          rows.addAll(RawJCuda.run(sizes));
        } catch (Throwable t) {
          rows.add("raw JCuda skipped: " + t);
        }
      } else {
        rows.add("raw JCuda skipped: no cuda backend");
      }
      System.out.println();
      rows.forEach(System.out::println);
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /**
   * In process isolation, waits until the spare device host stands ready: while it starts it
   * shares the GPU with the serving context (a likely reason the first SGEMMs of a process-isolation
   * run were 8% slower than in-process at 3c3abb40).
   */
  static void awaitSpare(DeviceClient device, Isolation isolation) throws Exception {
    if (isolation != Isolation.PROCESS) {
      return;
    }
    long deadline = System.currentTimeMillis() + 30_000;
    while (!await(device.stats()).isSpareReady() && System.currentTimeMillis() < deadline) {
      Thread.sleep(50);
    }
  }

  static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(10, TimeUnit.MINUTES);
  }

  /**
   * Sends {@code warmUp} requests (so the JIT has compiled their path, as in an application that
   * has been running), then {@code repeats} at once, and returns seconds per request from the first
   * send to the last reply: throughput with all of them in flight, which includes the first
   * request's way in and the last reply's way out.
   */
  static double timeEach(Counts counts, IntFunction<Future<?>> request) throws Exception {
    int warmUp = counts.warmUp();
    int repeats = counts.timed();
    for (int from = 0; from < warmUp; from += 20) {
      List<Future<?>> warm = new ArrayList<>();
      for (int i = from; i < Math.min(warmUp, from + 20); i++) {
        warm.add(request.apply(i));
      }
      await(Future.all(warm));
    }
    List<Future<?>> all = new ArrayList<>();
    long start = System.nanoTime();
    for (int i = 0; i < repeats; i++) {
      all.add(request.apply(warmUp + i));
    }
    await(Future.all(all));
    return (System.nanoTime() - start) / 1e9 / repeats;
  }

  private static List<String> viaVerticles(Vertx vertx, DeviceClient device, Sizes s) throws Exception {
    List<String> rows = new ArrayList<>();
    BlasClient blas = BlasClient.create(vertx);
    int n = s.gemm();
    BufferHandle a = await(device.alloc(DType.F32, (long) n * n));
    BufferHandle b = await(device.alloc(DType.F32, (long) n * n));
    BufferHandle c = await(device.alloc(DType.F32, (long) n * n));
    await(device.fill(a, 1.0));
    await(device.fill(b, 0.5));
    double flops = 2.0 * n * n * n;
    for (boolean tf32 : new boolean[] {false, true}) {
      BlasRequest gemm = new BlasRequest(BlasOp.GEMM).setM(n).setN(n).setK(n).setA(a).setLda(n).setB(b).setLdb(n)
        .setC(c).setLdc(n).setTf32(tf32);
      double t = timeEach(tf32 ? s.tf32() : s.fp32(), i -> blas.execute(gemm));
      rows.add(String.format("verticle SGEMM %d %s: %.3f ms, %.4g TFLOP/s", n, tf32 ? "TF32" : "FP32", t * 1e3,
        flops / t / 1e12));
    }
    for (BufferHandle h : List.of(a, b, c)) {
      await(device.free(h));
    }

    FftClient fft = FftClient.create(vertx);
    BufferHandle signal = await(device.alloc(DType.F32, 2L * s.fftLength() * s.fftBatch()));
    await(device.fill(signal, 0.25));
    FftRequest c2c = new FftRequest().setType(FftType.C2C).setDirection(FftDirection.FORWARD)
      .setN(List.of(s.fftLength())).setBatch(s.fftBatch()).setInput(signal).setOutput(signal);
    double tf = timeEach(s.fft(), i -> fft.execute(c2c));
    rows.add(String.format("verticle FFT C2C %d x %d: %.3f ms", s.fftLength(), s.fftBatch(), tf * 1e3));
    await(device.free(signal));

    RandClient rand = RandClient.create(vertx);
    BufferHandle numbers = await(device.alloc(DType.F32, s.rngCount()));
    // Successive numbers of one sequence, as the raw run makes them: each request starts where the last ended.
    double tr = timeEach(s.rng(), i -> rand.generate(new RandRequest().setGenerator(RngType.PHILOX4_32_10)
      .setSeed(1234).setOffset(i * s.rngCount()).setOutput(numbers)));
    rows.add(String.format("verticle uniform RNG %d floats: %.3f ms", s.rngCount(), tr * 1e3));
    await(device.free(numbers));
    return rows;
  }

  /** The small GEMMs' m = n = k: 64 (another size, e.g. 1 to see the toolkit's own cost, via -Dvertxcuda.bench.smallGemm). */
  static final int SMALL_GEMM = Integer.getInteger("vertxcuda.bench.smallGemm", 64);

  /**
   * 64x64 SGEMMs from {@code clients.size()} event loops (one client each), {@code inFlight}
   * outstanding in all, each on its own output: a request that completes frees its slot for the next
   * one, made in the completion's task. The first ones are made {@code perTask} to a task (a
   * coalescing client sends each task's requests as one message).
   */
  private static String smallGemms(Vertx vertx, DeviceClient device, List<BlasClient> clients, Sizes s,
                                   int inFlight, int perTask, String label) throws Exception {
    int n = SMALL_GEMM;
    BufferHandle a = await(device.alloc(DType.F32, n * n));
    BufferHandle b = await(device.alloc(DType.F32, n * n));
    await(device.fill(a, 1.0));
    await(device.fill(b, 1.0));
    List<BufferHandle> outputs = new ArrayList<>();
    for (int i = 0; i < inFlight; i++) {
      outputs.add(await(device.alloc(DType.F32, n * n)));
    }
    // A warm-up pass, then the timed one.
    runGemms(vertx, clients, a, b, outputs, Math.min(s.smallGemms(), 20 * inFlight), perTask);
    long start = System.nanoTime();
    int largest = runGemms(vertx, clients, a, b, outputs, s.smallGemms(), perTask);
    double seconds = (System.nanoTime() - start) / 1e9;
    for (BufferHandle h : outputs) {
      await(device.free(h));
    }
    await(device.free(a));
    await(device.free(b));
    return String.format("verticle %s: %d requests from %d event loop%s, %d in flight, %.0f requests/s, %.2f us each,"
      + " largest batch %d", label, s.smallGemms(), clients.size(), clients.size() == 1 ? "" : "s", inFlight,
      s.smallGemms() / seconds, seconds / s.smallGemms() * 1e6, largest);
  }

  /** Runs {@code total} GEMMs as described above; returns the largest batch a reply reported. */
  private static int runGemms(Vertx vertx, List<BlasClient> clients, BufferHandle a, BufferHandle b,
                              List<BufferHandle> outputs, int total, int perTask) throws Exception {
    int share = outputs.size() / clients.size();
    List<Future<Integer>> all = new ArrayList<>();
    for (int i = 0; i < clients.size(); i++) {
      int requests = total / clients.size() + (i < total % clients.size() ? 1 : 0);
      all.add(runGemms(vertx, clients.get(i), a, b, outputs.subList(i * share, (i + 1) * share), requests, perTask));
    }
    await(Future.all(all));
    return all.stream().mapToInt(Future::result).max().orElse(0);
  }

  /** One client's part, on an event-loop context of its own. */
  private static Future<Integer> runGemms(Vertx vertx, BlasClient blas, BufferHandle a, BufferHandle b,
                                          List<BufferHandle> outputs, int total, int perTask) {
    int n = SMALL_GEMM;
    io.vertx.core.Promise<Integer> done = io.vertx.core.Promise.promise();
    int[] sent = {0};
    int[] completed = {0};
    int[] largest = {0};
    // From a thread outside Vert.x, each runOnContext gets a new event-loop context (event loops in turn).
    vertx.runOnContext(v -> {
      io.vertx.core.Context context = vertx.getOrCreateContext();
      java.util.function.IntConsumer[] issue = new java.util.function.IntConsumer[1];
      issue[0] = slot -> {
        if (sent[0] == total) {
          return;
        }
        sent[0]++;
        blas.execute(new BlasRequest(BlasOp.GEMM).setM(n).setN(n).setK(n).setA(a).setLda(n).setB(b).setLdb(n)
          .setC(outputs.get(slot)).setLdc(n)).onComplete(ar -> {
            if (ar.failed()) {
              done.tryFail(ar.cause());
              return;
            }
            largest[0] = Math.max(largest[0], ar.result().getBatchSize());
            if (++completed[0] == total) {
              done.tryComplete(largest[0]);
            } else {
              issue[0].accept(slot);
            }
          });
      };
      if (total == 0) {
        done.tryComplete(0);
      }
      for (int from = 0; from < outputs.size(); from += perTask) {
        int first = from;
        context.runOnContext(x -> {
          for (int slot = first; slot < Math.min(outputs.size(), first + perTask); slot++) {
            issue[0].accept(slot);
          }
        });
      }
    });
    return done.future();
  }
}
