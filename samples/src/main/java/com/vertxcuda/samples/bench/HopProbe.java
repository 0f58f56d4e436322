package com.vertxcuda.samples.bench;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.device.context.Probe;
import com.vertxcuda.fft.FftClient;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftRequest;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.rand.RandClient;
import com.vertxcuda.rand.RngType;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * Where a request's time goes: runs requests through the verticles (context tier in this JVM) with
 * {@link Probe} on ({@code -Dvertxcuda.probe=true}) and prints, per request, the time between its
 * hops: client send, device verticle forward, context or library receive, queued, completion seen,
 * reply sent, device verticle answered, client reply. A diagnostic, not a benchmark.
 *
 * <p>Arguments: {@code [auto|cuda|host] [small]}.
 */
public final class HopProbe {

  private HopProbe() {
  }

  public static void main(String[] args) throws Exception {
    if (!Probe.ENABLED) {
      System.out.println("run with -Dvertxcuda.probe=true");
      return;
    }
    BackendKind backend = args.length > 0 ? BackendKind.valueOf(args[0].toUpperCase(Locale.ROOT)) : BackendKind.AUTO;
    boolean small = args.length > 1 && args[1].equals("small");
    int big = small ? 16 << 20 : 256 << 20;
    long rng = small ? 1 << 20 : 1L << 28;
    int fftLength = small ? 1 << 12 : 1 << 20;
    int gemm = small ? 256 : 8192;
    Vertx vertx = Vertx.vertx();
    try {
      DeviceOptions options = new DeviceOptions().setBackend(backend).setIsolation(Isolation.IN_PROCESS)
        .setHostMemory(4L << 30).setSharedMemorySize(2047L << 20);
      DeviceVerticle dv = new DeviceVerticle(options);
      await(vertx.deployVerticle(dv));
      DeviceClient device = DeviceClient.create(vertx);
      System.out.println("backend: " + await(device.describe()).getBackend());

      BufferHandle target = await(device.alloc(DType.U8, big));
      Buffer pinned = dv.allocateTransferBuffer(big);
      pinned.appendBytes(new byte[big]);
      run("upload one at a time", 8, 1, i -> device.upload(target, pinned));
      run("download one at a time", 8, 1, i -> device.download(target).map(b -> {
        dv.releaseTransferBuffer(b);
        return b;
      }));
      run("upload 4 in flight", 12, 4, i -> device.upload(target, pinned));
      dv.releaseTransferBuffer(pinned);
      await(device.free(target));
      BufferHandle kib = await(device.alloc(DType.F32, 256));
      run("fill 1 KiB one at a time", 20, 1, i -> device.fill(kib, i));
      await(device.free(kib));

      RandClient rand = RandClient.create(vertx);
      BufferHandle numbers = await(device.alloc(DType.F32, rng));
      run("uniform RNG 2^" + Long.numberOfTrailingZeros(rng) + ", 10 in flight", 10, 10,
        i -> rand.uniform(RngType.PHILOX4_32_10, 1234, numbers));
      await(device.free(numbers));

      FftClient fft = FftClient.create(vertx);
      BufferHandle signal = await(device.alloc(DType.F32, 2L * fftLength * 64));
      FftRequest c2c = new FftRequest().setType(FftType.C2C).setDirection(FftDirection.FORWARD)
        .setN(List.of(fftLength)).setBatch(64).setInput(signal).setOutput(signal);
      run("FFT C2C, 10 in flight", 10, 10, i -> fft.execute(c2c));
      await(device.free(signal));

      BlasClient blas = BlasClient.create(vertx);
      BufferHandle a = await(device.alloc(DType.F32, (long) gemm * gemm));
      BufferHandle b = await(device.alloc(DType.F32, (long) gemm * gemm));
      BufferHandle c = await(device.alloc(DType.F32, (long) gemm * gemm));
      for (boolean tf32 : new boolean[] {false, true}) {
        BlasRequest r = new BlasRequest(BlasOp.GEMM).setM(gemm).setN(gemm).setK(gemm).setA(a).setLda(gemm).setB(b)
          .setLdb(gemm).setC(c).setLdc(gemm).setTf32(tf32);
        run("SGEMM " + (tf32 ? "TF32" : "FP32") + ", 10 in flight", 10, 10, i -> blas.execute(r));
      }
      for (BufferHandle h : List.of(a, b, c)) {
        await(device.free(h));
      }
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    if (!small) {
      System.out.println();
      RawJCuda.variants(rng, fftLength, 64, 10).forEach(System.out::println);
    }
  }

  /** {@code count} requests, {@code window} in flight at a time, after two warm-ups; prints each one's hops. */
  private static void run(String label, int count, int window, IntFunction<Future<?>> request) throws Exception {
    await(request.apply(-1));
    await(request.apply(-2));
    Probe.drain();
    long[] sent = new long[count];
    long[] back = new long[count];
    long start = System.nanoTime();
    for (int i = 0; i < count; i += window) {
      List<Future<?>> wave = new ArrayList<>();
      for (int j = i; j < Math.min(count, i + window); j++) {
        int k = j;
        sent[k] = System.nanoTime();
        wave.add(request.apply(k).onComplete(ar -> back[k] = System.nanoTime()));
      }
      await(Future.all(wave));
    }
    long total = System.nanoTime() - start;
    Map<Long, long[]> bySeq = new TreeMap<>();
    Map<Probe.Point, String> threads = new TreeMap<>();
    for (Probe.Mark m : Probe.drain()) {
      bySeq.computeIfAbsent(m.seq(), s -> new long[Probe.Point.values().length])[m.point().ordinal()] = m.nanos();
      threads.putIfAbsent(m.point(), m.thread());
    }
    System.out.printf("%n== %s: %d requests in %.3f ms (%.3f ms each)%n", label, count, total / 1e6,
      total / 1e6 / count);
    System.out.println("threads: " + threads);
    System.out.println("  #   send>fwd  fwd>recv recv>queue queue>done  done>reply reply>answer answer>client"
      + "   total    done-gap  (us)");
    List<long[]> rows = new ArrayList<>(bySeq.values());
    rows.sort(Comparator.comparingLong(r -> r[0]));
    long prevDone = 0;
    for (int i = 0; i < Math.min(rows.size(), count); i++) {
      long[] r = rows.get(i);
      long[] t = {sent[i], r[0], r[1], r[2], r[3], r[4], r[5], back[i]};
      StringBuilder line = new StringBuilder(String.format("%3d", i));
      for (int j = 1; j < t.length; j++) {
        line.append(String.format(" %9.1f", (t[j] - t[j - 1]) / 1e3));
      }
      line.append(String.format(" %9.1f %9.1f", (t[7] - t[0]) / 1e3, prevDone == 0 ? 0 : (r[3] - prevDone) / 1e3));
      prevDone = r[3];
      System.out.println(line);
    }
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(5, TimeUnit.MINUTES);
  }
}
