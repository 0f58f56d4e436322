package com.vertxcuda.samples.bench;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.device.cuda.CudaBackend;
import com.vertxcuda.device.cuda.CudaContext;
import com.vertxcuda.device.cuda.CudaUnavailableException;
import com.vertxcuda.device.cuda.PinnedMemory;
import com.vertxcuda.CudaException;
import com.vertxcuda.Library;
import com.vertxcuda.device.impl.ContextTier;
import com.vertxcuda.device.impl.InProcessContextTier;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.message.AllocRequest;
import com.vertxcuda.message.FillRequest;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Raw JCuda against the verticles, in one run on one GPU: 256 MiB pinned copies each way, the
 * small-request round trip (fill 1 KiB, reply when the GPU is done) against raw memset +
 * synchronize, and completion seen by the polling thread against {@code cuLaunchHostFunc}.
 * Writes {@code device-bench.json} and {@code device-bench.txt} into the folder given (default: .).
 *
 * <p>Run: {@code java -cp ... com.vertxcuda.samples.bench.DeviceBench [outDir] [host]}; {@code host}
 * runs only the verticle sections on the host backend, to try the harness without a GPU.
 */
public final class DeviceBench {

  private static final int BIG = 256 << 20;
  private static final int BIG_ITERS = 20;
  /** Copies in flight at once in the pipelined runs, and how many such rounds. */
  private static final int PIPE = 6;
  private static final int PIPE_ROUNDS = 8;
  /** Rounds of 24 small requests that warm the request path up before the copies are timed. */
  private static final int WARMUP_ROUNDS = 500;
  private static final int SMALL = 1024;
  private static final int SMALL_WARMUP = 2_000;
  private static final int SMALL_ITERS = 20_000;

  private final JsonObject result = new JsonObject();
  private BackendKind backend = BackendKind.CUDA;
  private final StringBuilder text = new StringBuilder();

  public static void main(String[] args) throws Exception {
    Path out = Path.of(args.length > 0 ? args[0] : ".");
    Files.createDirectories(out);
    DeviceBench bench = new DeviceBench();
    if (args.length > 1 && args[1].equals("host")) {
      bench.backend = BackendKind.HOST; // the verticle sections only, to try the harness without a GPU
      bench.verticleSections();
      bench.write(out);
    } else {
      bench.run(out);
    }
    System.exit(0);
  }

  private void run(Path out) throws Exception {
    try {
      CudaBackend.load(new DeviceOptions().setBackend(BackendKind.CUDA));
    } catch (CudaUnavailableException e) {
      result.put("gpu", false).put("reason", e.getMessage());
      line("no GPU present, nothing measured: " + e.getMessage());
      write(out);
      return;
    }
    result.put("gpu", true);
    CudaContext device = (CudaContext) CudaBackend.load(new DeviceOptions()).open(0);
    result.put("device", device.deviceName()).put("computeCapability", device.computeCapability());
    line("device: " + device.deviceName() + " (" + device.computeCapability() + ")");
    raw(device);
    completion(device);
    verticleSections();
    device.close(false);
    write(out);
  }

  private void verticleSections() {
    try {
      contextTierDirect();
    } catch (Exception e) {
      result.put("tier.failed", e.toString());
      line("tier failed: " + e);
    }
    for (Isolation isolation : new Isolation[] {Isolation.IN_PROCESS, Isolation.PROCESS}) {
      String prefix = isolation == Isolation.IN_PROCESS ? "verticle." : "verticleProcess.";
      try {
        verticles(isolation, prefix);
      } catch (Exception e) {
        result.put(prefix + "failed", e.toString());
        line(prefix + " failed: " + e);
      }
    }
  }

  // ---- raw JCuda ----

  private void raw(CudaContext device) throws Exception {
    CUstream s = new CUstream();
    check(JCudaDriver.cuStreamCreate(s, CUstream_flags.CU_STREAM_NON_BLOCKING));
    Pointer host = new Pointer();
    check(JCudaDriver.cuMemHostAlloc(host, BIG, JCudaDriver.CU_MEMHOSTALLOC_PORTABLE));
    CUdeviceptr dev = new CUdeviceptr();
    check(JCudaDriver.cuMemAlloc(dev, BIG));
    long[] h2d = new long[BIG_ITERS];
    long[] d2h = new long[BIG_ITERS];
    for (int i = -3; i < BIG_ITERS; i++) {
      long t0 = System.nanoTime();
      check(JCudaDriver.cuMemcpyHtoDAsync(dev, host, BIG, s));
      check(JCudaDriver.cuStreamSynchronize(s));
      long t1 = System.nanoTime();
      check(JCudaDriver.cuMemcpyDtoHAsync(host, dev, BIG, s));
      check(JCudaDriver.cuStreamSynchronize(s));
      long t2 = System.nanoTime();
      if (i >= 0) {
        h2d[i] = t1 - t0;
        d2h[i] = t2 - t1;
      }
    }
    bandwidth("raw.h2dPinned256MiB", h2d);
    bandwidth("raw.d2hPinned256MiB", d2h);
    // Pipelined: PIPE copies queued back to back, one synchronize at the end.
    long[] h2dPipe = new long[PIPE_ROUNDS];
    long[] d2hPipe = new long[PIPE_ROUNDS];
    for (int r = -1; r < PIPE_ROUNDS; r++) {
      long t0 = System.nanoTime();
      for (int i = 0; i < PIPE; i++) {
        check(JCudaDriver.cuMemcpyHtoDAsync(dev, host, BIG, s));
      }
      check(JCudaDriver.cuStreamSynchronize(s));
      long t1 = System.nanoTime();
      for (int i = 0; i < PIPE; i++) {
        check(JCudaDriver.cuMemcpyDtoHAsync(host, dev, BIG, s));
      }
      check(JCudaDriver.cuStreamSynchronize(s));
      long t2 = System.nanoTime();
      if (r >= 0) {
        h2dPipe[r] = (t1 - t0) / PIPE;
        d2hPipe[r] = (t2 - t1) / PIPE;
      }
    }
    bandwidth("raw.h2dPinned256MiB.pipelined", h2dPipe);
    bandwidth("raw.d2hPinned256MiB.pipelined", d2hPipe);

    long[] rt = new long[SMALL_ITERS];
    for (int i = -SMALL_WARMUP; i < SMALL_ITERS; i++) {
      long t0 = System.nanoTime();
      check(JCudaDriver.cuMemsetD8Async(dev, (byte) i, SMALL, s));
      check(JCudaDriver.cuStreamSynchronize(s));
      if (i >= 0) {
        rt[i] = System.nanoTime() - t0;
      }
    }
    latency("raw.memset1KiBSynchronize", rt);
    check(JCudaDriver.cuMemFree(dev));
    check(JCudaDriver.cuMemFreeHost(host));
    check(JCudaDriver.cuStreamDestroy(s));
  }

  // ---- completion: polling thread vs host-function callback ----

  private static final class Flag {
    volatile long seenAt;
  }

  private void completion(CudaContext device) throws Exception {
    GpuStream stream = device.createStream("bench");
    CUstream s = device.stream(stream);
    var memory = device.allocate(SMALL);
    CUdeviceptr p = device.pointer(memory, 0);

    long[] hostFn = new long[SMALL_ITERS];
    Flag flag = new Flag();
    for (int i = -SMALL_WARMUP; i < SMALL_ITERS; i++) {
      flag.seenAt = 0;
      long t0 = System.nanoTime();
      check(JCudaDriver.cuMemsetD8Async(p, (byte) i, SMALL, s));
      check(JCudaDriver.cuLaunchHostFunc(s, data -> ((Flag) data).seenAt = System.nanoTime(), flag));
      while (flag.seenAt == 0) {
        Thread.onSpinWait();
      }
      if (i >= 0) {
        hostFn[i] = flag.seenAt - t0;
      }
    }
    latency("completion.cuLaunchHostFunc", hostFn);

    long[] polled = new long[SMALL_ITERS];
    for (int i = -SMALL_WARMUP; i < SMALL_ITERS; i++) {
      long t0 = System.nanoTime();
      device.fill(stream, memory, 0, SMALL, 1, i & 0xFF);
      GpuEvent e = device.record(stream);
      CompletableFuture<Void> done = device.whenComplete(e);
      while (!done.isDone()) {
        Thread.onSpinWait();
      }
      long t1 = System.nanoTime();
      e.release();
      if (i >= 0) {
        polled[i] = t1 - t0;
      }
    }
    latency("completion.pollingThread", polled);
    device.release(memory);

    // The same 256 MiB pinned copy through the context alone (no event bus), completion by the poller.
    var big = device.allocate(BIG);
    Buffer pinned = device.pinnedBuffer(BIG);
    pinned.appendBytes(new byte[BIG]);
    java.nio.ByteBuffer src = ((io.vertx.core.internal.buffer.BufferInternal) pinned).getByteBuf().nioBuffer();
    long[] h2d = new long[BIG_ITERS];
    for (int i = -3; i < BIG_ITERS; i++) {
      long t0 = System.nanoTime();
      device.copyHostToDevice(stream, src.duplicate(), big, 0);
      GpuEvent e = device.record(stream);
      CompletableFuture<Void> done = device.whenComplete(e);
      while (!done.isDone()) {
        Thread.onSpinWait();
      }
      long t1 = System.nanoTime();
      e.release();
      if (i >= 0) {
        h2d[i] = t1 - t0;
      }
    }
    bandwidth("context.h2dPinned256MiB", h2d);
    PinnedMemory.release(pinned);
    device.release(big);

    // How long a 50 µs timed park really takes here (why the poller yields rather than parks).
    long[] parks = new long[2_000];
    for (int i = 0; i < parks.length; i++) {
      long t0 = System.nanoTime();
      java.util.concurrent.locks.LockSupport.parkNanos(50_000);
      parks[i] = System.nanoTime() - t0;
    }
    latency("diagnostic.parkNanos50us", parks);
  }

  // ---- the verticles ----

  /**
   * The verticles with the context tier in this JVM ({@code IN_PROCESS}: the lowest latency, the
   * mode the ratios to raw use) or in a device-host process ({@code PROCESS}: transfers through the
   * shared region, page-locked by the device host).
   */
  private void verticles(Isolation isolation, String prefix) throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      // A 2 GiB shared region: the pipelined run has five 256 MiB transfers in flight.
      DeviceOptions options = new DeviceOptions().setBackend(backend).setIsolation(isolation)
        .setLibraries(List.of()).setSharedMemorySize(2047L << 20);
      DeviceVerticle deviceVerticle = new DeviceVerticle(options);
      await(vertx.deployVerticle(deviceVerticle));
      DeviceClient client = DeviceClient.create(vertx);
      BufferHandle big = await(client.alloc(DType.U8, BIG));
      warmUp(client, deviceVerticle);

      Buffer pinned = deviceVerticle.allocateTransferBuffer(BIG);
      pinned.appendBytes(new byte[BIG]);
      long[] h2d = new long[BIG_ITERS];
      for (int i = -3; i < BIG_ITERS; i++) {
        long t0 = System.nanoTime();
        await(client.upload(big, pinned));
        if (i >= 0) {
          h2d[i] = System.nanoTime() - t0;
        }
      }
      bandwidth(prefix + "h2dPinnedBuffer256MiB", h2d);
      // The same with the caller spinning on the reply instead of parking, as cuStreamSynchronize spins
      // in the raw run: tells a sleeping caller's wake-up apart from the verticles' own cost.
      long[] h2dSpin = new long[BIG_ITERS];
      for (int i = -3; i < BIG_ITERS; i++) {
        long t0 = System.nanoTime();
        spin(client.upload(big, pinned));
        if (i >= 0) {
          h2dSpin[i] = System.nanoTime() - t0;
        }
      }
      bandwidth(prefix + "h2dPinnedBuffer256MiB.callerSpins", h2dSpin);
      deviceVerticle.releaseTransferBuffer(pinned);

      long[] d2h = new long[BIG_ITERS];
      int pinnedReplies = 0;
      for (int i = -3; i < BIG_ITERS; i++) {
        long t0 = System.nanoTime();
        Buffer down = await(client.download(big));
        if (i >= 0) {
          d2h[i] = System.nanoTime() - t0;
        }
        // Hand the pinned reply back so the next download reuses it, as an application would.
        pinnedReplies += deviceVerticle.releaseTransferBuffer(down) ? 1 : 0;
      }
      bandwidth(prefix + "d2hPinned256MiB", d2h);
      result.getJsonObject(prefix + "d2hPinned256MiB").put("pinnedReplies", pinnedReplies);

      // Pipelined, as an application streaming data would: PIPE requests in flight, then wait.
      Buffer source = deviceVerticle.allocateTransferBuffer(BIG);
      source.appendBytes(new byte[BIG]);
      long[] h2dPipe = new long[PIPE_ROUNDS];
      long[] d2hPipe = new long[PIPE_ROUNDS];
      for (int r = -1; r < PIPE_ROUNDS; r++) {
        List<Future<?>> ups = new java.util.ArrayList<>();
        long t0 = System.nanoTime();
        for (int i = 0; i < PIPE; i++) {
          ups.add(client.upload(big, source));
        }
        await(Future.all(ups));
        long t1 = System.nanoTime();
        List<Future<Buffer>> downs = new java.util.ArrayList<>();
        for (int i = 0; i < PIPE; i++) {
          downs.add(client.download(big));
        }
        await(Future.all(downs));
        long t2 = System.nanoTime();
        downs.forEach(f -> deviceVerticle.releaseTransferBuffer(f.result()));
        if (r >= 0) {
          h2dPipe[r] = (t1 - t0) / PIPE;
          d2hPipe[r] = (t2 - t1) / PIPE;
        }
      }
      deviceVerticle.releaseTransferBuffer(source);
      bandwidth(prefix + "h2dPinnedBuffer256MiB.pipelined", h2dPipe);
      bandwidth(prefix + "d2hPinned256MiB.pipelined", d2hPipe);

      Buffer heap = Buffer.buffer(new byte[BIG]);
      long[] staged = new long[5];
      for (int i = -1; i < staged.length; i++) {
        long t0 = System.nanoTime();
        await(client.upload(big, heap));
        if (i >= 0) {
          staged[i] = System.nanoTime() - t0;
        }
      }
      bandwidth(prefix + "h2dHeapBufferStaged256MiB", staged);
      await(client.free(big));

      BufferHandle small = await(client.alloc(DType.U8, SMALL));
      long[] rt = new long[SMALL_ITERS];
      Promise<Void> done = Promise.promise();
      vertx.runOnContext(v -> roundTrips(client, small, rt, -SMALL_WARMUP, done));
      await(done.future());
      latency(prefix + "fill1KiBRoundTrip", rt);
      await(client.free(small));
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /**
   * Small uploads, downloads and fills through the same path as the copies measured next, so the
   * JIT has compiled it as in an application that has been running: a cold path costs each 256 MiB
   * copy about a millisecond (seen on the H200).
   */
  private static void warmUp(DeviceClient client, DeviceVerticle deviceVerticle) throws Exception {
    BufferHandle h = await(client.alloc(DType.U8, 64 << 10));
    Buffer data = deviceVerticle.allocateTransferBuffer(64 << 10);
    data.appendBytes(new byte[64 << 10]);
    for (int round = 0; round < WARMUP_ROUNDS; round++) {
      List<Future<?>> wave = new java.util.ArrayList<>();
      for (int i = 0; i < 8; i++) {
        wave.add(client.upload(h, data));
        wave.add(client.download(h).map(deviceVerticle::releaseTransferBuffer));
        wave.add(client.fill(h, i));
      }
      await(Future.all(wave));
    }
    deviceVerticle.releaseTransferBuffer(data);
    await(client.free(h));
  }

  /**
   * One hop fewer than the verticles: fills submitted straight into the context tier's queue (no
   * event bus, no device verticle), each answered from the completion thread, which submits the
   * next. With raw memset + synchronize below it and the device verticle above it, this splits a
   * round trip into its hops.
   */
  private void contextTierDirect() throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      DeviceOptions options = new DeviceOptions().setBackend(backend).setLibraries(List.of());
      ContextTier tier = await(InProcessContextTier.launch(vertx, options, "bench", 1, reason -> { }));
      BufferHandle h = (BufferHandle) await(direct(tier, new AllocRequest(DType.U8, SMALL)));
      long[] rt = new long[SMALL_ITERS];
      CompletableFuture<Void> done = new CompletableFuture<>();
      directRoundTrips(tier, h, rt, -SMALL_WARMUP, done);
      done.get(120, TimeUnit.SECONDS);
      latency("tier.fill1KiBRoundTrip", rt);
      await(tier.stop());
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private static void directRoundTrips(ContextTier tier, BufferHandle h, long[] rt, int i, CompletableFuture<Void> done) {
    if (i == rt.length) {
      done.complete(null);
      return;
    }
    long t0 = System.nanoTime();
    tier.submit(new DirectRequest(FillRequest.ofInteger(h, i & 0x7F), reply -> {
      if (i >= 0) {
        rt[i] = System.nanoTime() - t0;
      }
      directRoundTrips(tier, h, rt, i + 1, done);
    }, done::completeExceptionally));
  }

  private static Future<Object> direct(ContextTier tier, Object body) {
    Promise<Object> p = Promise.promise();
    tier.submit(new DirectRequest(body, p::tryComplete, p::tryFail));
    return p.future();
  }

  /** A request made in this JVM, answered through callbacks. */
  private record DirectRequest(Object body, java.util.function.Consumer<Object> onReply,
                               java.util.function.Consumer<Throwable> onFailure) implements Request {
    @Override public Library library() { return null; }
    @Override public long deadline() { return System.nanoTime() + TimeUnit.MINUTES.toNanos(1); }
    @Override public void reply(Object b) { onReply.accept(b); }
    @Override public void fail(CudaException e) { onFailure.accept(e); }
  }

  /** Sequential requests from an event loop: request, GPU done, reply; then the next. */
  private static void roundTrips(DeviceClient client, BufferHandle h, long[] rt, int i, Promise<Void> done) {
    if (i == rt.length) {
      done.complete();
      return;
    }
    long t0 = System.nanoTime();
    client.fillInteger(h, i & 0x7F).onComplete(ar -> {
      if (ar.failed()) {
        done.fail(ar.cause());
        return;
      }
      if (i >= 0) {
        rt[i] = System.nanoTime() - t0;
      }
      roundTrips(client, h, rt, i + 1, done);
    });
  }

  // ---- reporting ----

  private void bandwidth(String name, long[] nanos) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    double median = sorted[sorted.length / 2];
    double best = sorted[0];
    double gbs = BIG / median;
    result.put(name, new JsonObject().put("bytes", BIG).put("iterations", nanos.length)
      .put("medianGBps", round(gbs)).put("bestGBps", round(BIG / best)).put("medianMs", round(median / 1e6)));
    line(String.format("%-40s median %7.2f GB/s  best %7.2f GB/s  (%d x %d MiB)", name, gbs, BIG / best,
      nanos.length, BIG >> 20));
  }

  private void latency(String name, long[] nanos) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    double p50 = sorted[sorted.length / 2] / 1e3;
    double p99 = sorted[(int) (sorted.length * 0.99)] / 1e3;
    double mean = Arrays.stream(nanos).average().orElse(0) / 1e3;
    result.put(name, new JsonObject().put("samples", nanos.length).put("p50us", round(p50))
      .put("p99us", round(p99)).put("meanUs", round(mean)));
    line(String.format("%-40s p50 %8.2f us  p99 %8.2f us  mean %8.2f us  (%d samples)", name, p50, p99, mean,
      nanos.length));
  }

  private void write(Path out) throws Exception {
    hops();
    if (result.containsKey("raw.h2dPinned256MiB") && result.containsKey("verticle.h2dPinnedBuffer256MiB")) {
      double h2d = result.getJsonObject("verticle.h2dPinnedBuffer256MiB").getDouble("medianGBps")
        / result.getJsonObject("raw.h2dPinned256MiB").getDouble("medianGBps");
      double d2h = result.getJsonObject("verticle.d2hPinned256MiB").getDouble("medianGBps")
        / result.getJsonObject("raw.d2hPinned256MiB").getDouble("medianGBps");
      result.put("ratio.h2dVerticleOverRaw", round(h2d)).put("ratio.d2hVerticleOverRaw", round(d2h));
      line(String.format("verticle/raw, one copy at a time: H2D %.3f  D2H %.3f (goal >= 0.95)", h2d, d2h));
      for (String mode : new String[] {"verticle.", "verticleProcess."}) {
        if (result.containsKey(mode + "h2dPinnedBuffer256MiB.pipelined")) {
          double hp = result.getJsonObject(mode + "h2dPinnedBuffer256MiB.pipelined").getDouble("medianGBps")
            / result.getJsonObject("raw.h2dPinned256MiB.pipelined").getDouble("medianGBps");
          double dp = result.getJsonObject(mode + "d2hPinned256MiB.pipelined").getDouble("medianGBps")
            / result.getJsonObject("raw.d2hPinned256MiB.pipelined").getDouble("medianGBps");
          result.put("ratio." + mode + "pipelined.h2d", round(hp)).put("ratio." + mode + "pipelined.d2h", round(dp));
          line(String.format("%s/raw, %d in flight: H2D %.3f  D2H %.3f (goal >= 0.95)", mode.substring(0, mode.length() - 1),
            PIPE, hp, dp));
        }
      }
    }
    Files.writeString(out.resolve("device-bench.json"), result.encodePrettily() + "\n", StandardCharsets.UTF_8);
    Files.writeString(out.resolve("device-bench.txt"), text.toString(), StandardCharsets.UTF_8);
  }

  // The small request's round trip, hop by hop: each row adds one hop to the one above it.
  private void hops() {
    String[][] rows = {
      {"raw.memset1KiBSynchronize", "GPU work + synchronize (raw JCuda)"},
      {"completion.pollingThread", "+ completion seen by the polling thread"},
      {"tier.fill1KiBRoundTrip", "+ submission queue and thread, ordering, reply callback"},
      {"verticle.fill1KiBRoundTrip", "+ event bus and device verticle (in-process; goal p50 <= 25 us)"},
      {"verticleProcess.fill1KiBRoundTrip", "+ link to the device host (process; goal p50 <= 40 us)"},
    };
    line("hops of a 1 KiB fill round trip (p50 / p99, us; each row adds to the one above):");
    double prev = Double.NaN;
    for (String[] row : rows) {
      JsonObject r = result.getJsonObject(row[0]);
      if (r == null) {
        continue;
      }
      double p50 = r.getDouble("p50us");
      line(String.format("  %-36s %8.2f / %8.2f  (+%.2f)  %s", row[0], p50, r.getDouble("p99us"),
        Double.isNaN(prev) ? p50 : p50 - prev, row[1]));
      prev = p50;
    }
  }

  private void line(String s) {
    System.out.println(s);
    text.append(s).append('\n');
  }

  private static double round(double v) {
    return Math.round(v * 1000) / 1000.0;
  }

  private static void check(int r) {
    if (r != 0) {
      throw new IllegalStateException(jcuda.driver.CUresult.stringFor(r));
    }
  }

  private static <T> T spin(Future<T> f) throws Exception {
    while (!f.isComplete()) {
      Thread.onSpinWait();
    }
    return await(f);
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }
}
