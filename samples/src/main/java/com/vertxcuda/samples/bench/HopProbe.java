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
import com.vertxcuda.rand.RandRequest;
import com.vertxcuda.rand.RngType;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;

import java.nio.file.Files;
import java.nio.file.Path;
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
    for (Isolation isolation : new Isolation[] {Isolation.IN_PROCESS, Isolation.PROCESS}) {
      probe(backend, small, isolation);
    }
    if (!small) {
      System.out.println();
      RawJCuda.variants(1L << 28, 1 << 20, 64, 10).forEach(System.out::println);
    }
  }

  private static void probe(BackendKind backend, boolean small, Isolation isolation) throws Exception {
    int big = small ? 16 << 20 : 256 << 20;
    long rng = small ? 1 << 20 : 1L << 28;
    int fftLength = small ? 1 << 12 : 1 << 20;
    int gemm = small ? 256 : 8192;
    Path marks = Files.createTempFile("vertx-cuda-probe", ".txt");
    Files.delete(marks);
    markFile = isolation == Isolation.PROCESS ? marks : null;
    Vertx vertx = Vertx.vertx();
    try {
      DeviceOptions options = new DeviceOptions().setBackend(backend).setIsolation(isolation).setSpareDeviceHost(false)
        .setHostMemory(4L << 30).setSharedMemorySize(2047L << 20)
        .setDeviceHostJvmOptions(List.of("-Dvertxcuda.probe=true", "-Dvertxcuda.probe.file=" + marks));
      DeviceVerticle dv = new DeviceVerticle(options);
      await(vertx.deployVerticle(dv));
      DeviceClient device = DeviceClient.create(vertx);
      System.out.printf("%n######## %s, backend %s%n", isolation, await(device.describe()).getBackend());

      // Warm the request path up (JIT), as in an application that has been running.
      BufferHandle kib = await(device.alloc(DType.F32, 256));
      for (int round = 0; round < 300; round++) {
        List<Future<?>> wave = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
          wave.add(device.fill(kib, i));
          wave.add(device.download(kib).map(dv::releaseTransferBuffer));
        }
        await(Future.all(wave));
      }
      run("fill 1 KiB one at a time", 20, 1, i -> device.fill(kib, i));
      await(device.free(kib));

      BufferHandle target = await(device.alloc(DType.U8, big));
      Buffer pinned = dv.allocateTransferBuffer(big);
      pinned.appendBytes(new byte[big]);
      run("upload one at a time", 8, 1, i -> device.upload(target, pinned));
      run("download one at a time", 8, 1, i -> device.download(target).map(dv::releaseTransferBuffer));
      run("upload 4 in flight", 12, 4, i -> device.upload(target, pinned));
      dv.releaseTransferBuffer(pinned);
      await(device.free(target));

      // The library work in LibraryBench's order: GEMMs, then an FFT of a filled signal, then RNG.
      BlasClient blas = BlasClient.create(vertx);
      BufferHandle a = await(device.alloc(DType.F32, (long) gemm * gemm));
      BufferHandle b = await(device.alloc(DType.F32, (long) gemm * gemm));
      BufferHandle c = await(device.alloc(DType.F32, (long) gemm * gemm));
      await(device.fill(a, 1.0));
      await(device.fill(b, 0.5));
      for (boolean tf32 : new boolean[] {false, true}) {
        BlasRequest r = new BlasRequest(BlasOp.GEMM).setM(gemm).setN(gemm).setK(gemm).setA(a).setLda(gemm).setB(b)
          .setLdb(gemm).setC(c).setLdc(gemm).setTf32(tf32);
        run("SGEMM " + (tf32 ? "TF32" : "FP32") + ", 10 in flight", 10, 10, i -> blas.execute(r));
      }
      for (BufferHandle h : List.of(a, b, c)) {
        await(device.free(h));
      }

      FftClient fft = FftClient.create(vertx);
      BufferHandle signal = await(device.alloc(DType.F32, 2L * fftLength * 64));
      await(device.fill(signal, 0.25));
      FftRequest c2c = new FftRequest().setType(FftType.C2C).setDirection(FftDirection.FORWARD)
        .setN(List.of(fftLength)).setBatch(64).setInput(signal).setOutput(signal);
      run("FFT C2C of a filled signal, 10 in flight", 10, 10, i -> fft.execute(c2c));
      await(device.fill(signal, 0.25));
      FftRequest inverse = new FftRequest(c2c.toJson()).setDirection(FftDirection.INVERSE);
      run("FFT C2C forward and inverse in turn, 10 in flight", 10, 10,
        i -> fft.execute(i % 2 == 0 ? c2c : inverse));
      await(device.free(signal));

      RandClient rand = RandClient.create(vertx);
      BufferHandle numbers = await(device.alloc(DType.F32, rng));
      run("uniform RNG, same seed and offset, 10 in flight", 10, 10,
        i -> rand.uniform(RngType.PHILOX4_32_10, 1234, numbers));
      run("uniform RNG, each request continuing the last, 10 in flight", 10, 10,
        i -> rand.generate(new RandRequest().setGenerator(RngType.PHILOX4_32_10).setSeed(99).setOffset((i + 10) * rng)
          .setOutput(numbers)));
      await(device.free(numbers));
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      Files.deleteIfExists(marks);
    }
  }

  private static Path markFile;

  /** {@code count} requests, {@code window} in flight at a time, after warm-ups; prints each one's hops. */
  private static void run(String label, int count, int window, IntFunction<Future<?>> request) throws Exception {
    for (int i = 0; i < 4; i++) {
      await(request.apply(-1 - i));
    }
    Probe.drain();
    if (markFile != null) {
      Thread.sleep(200);
      Probe.takeFrom(markFile);
    }
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
    List<Probe.Mark> all = Probe.drain();
    if (markFile != null) {
      Thread.sleep(200); // the device host appends its marks every 50 ms
      all.addAll(Probe.takeFrom(markFile));
    }
    Map<Long, long[]> bySeq = new TreeMap<>();
    Map<Probe.Point, String> threads = new TreeMap<>();
    for (Probe.Mark m : all) {
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
