package com.vertxcuda.bench;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.Library;
import com.vertxcuda.bench.result.Series;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.context.BackendSelection;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.device.context.ContextTier;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.DeviceMemory;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftRequest;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.library.impl.CudaPointers;
import com.vertxcuda.message.AllocRequest;
import com.vertxcuda.message.FillRequest;
import com.vertxcuda.message.FreeRequest;
import com.vertxcuda.rand.RandRequest;
import com.vertxcuda.rand.RngType;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;
import jcuda.runtime.cudaStream_t;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

import static com.vertxcuda.bench.Await.await;

/**
 * Sweeps {@code hops.fft}, {@code hops.rng} and {@code hops.gemm}: the headline library calls one at
 * a time — an in-place C2C FFT of the largest length, the largest count of uniform F32 numbers
 * (Philox), a TF32 GEMM of the largest size — hop by hop, as {@code roundtrip.fill} has them for a
 * fill: raw JCuda (the call + synchronize, and completed by a host function); the same call on the
 * backend's context's own stream, completion seen by the context's completion path (cuda only);
 * submitted straight into the context tier's queue with its library set (no event bus, no device
 * verticle); through the device verticle with the typed client (in this JVM, or through the device
 * host in the process-isolation run). Each with its p50 and p99, so the report can say where the
 * time goes.
 */
final class LibraryHopsSection implements Section {

  /** A point's share of time, as a multiple of the size plan's seconds per point (about 1 s on the GPU). */
  private static final int TIME_FACTOR = 4;
  static final long SEED = 1234;

  /** The calls measured, each a sweep of its own with one point (its size). */
  enum Op {
    FFT("hops.fft", "C2C forward, in place", "complex elements"),
    RNG("hops.rng", "Philox, F32", "numbers"),
    GEMM("hops.gemm", "TF32", "m = n = k");

    final String sweep;
    /** The variant of the request itself (the tier's and the client's), as the sweeps name it. */
    final String variant;
    final String xName;

    Op(String sweep, String variant, String xName) {
      this.sweep = sweep;
      this.variant = variant;
      this.xName = xName;
    }

    /** The size measured: the sweep's largest, as the headline takes it. */
    long size(SweepSizes sizes) {
      switch (this) {
        case FFT:
          return sizes.fftLengths().stream().mapToInt(Integer::intValue).max().orElseThrow();
        case RNG:
          return sizes.rngCounts().stream().mapToLong(Long::longValue).max().orElseThrow();
        default:
          return sizes.gemmSizes().stream().mapToInt(Integer::intValue).max().orElseThrow();
      }
    }
  }

  @Override
  public String name() {
    return "libhops";
  }

  private static Series series(Bench bench, Op op, String path, String variant) {
    return bench.record.series(op.sweep, path, variant, "latency", "us", op.xName, "");
  }

  /** The plan for a hop whose one run takes about {@code nanosPerRun}. */
  private static Plan plan(Bench bench, long nanosPerRun) {
    double wanted = TIME_FACTOR * bench.sizes.secondsPerPoint() * 1e9 / Math.max(1, nanosPerRun);
    int runs = (int) Math.max(bench.sizes.minRuns(), Math.min(bench.sizes.maxRuns(), wanted));
    return new Plan(Math.max(3, runs / 10), runs);
  }

  private static void point(Bench bench, Series s, Op op, long x, Histograms.Op call) throws Exception {
    Plan plan = plan(bench, Histograms.loop(new Plan(0, 3), call).getMinValue());
    bench.latency(s, x, op.name() + " " + x, plan, Histograms.loop(plan, call), false);
  }

  @Override
  public void raw(Bench bench, RawJCuda raw) throws Exception {
    HostFunctionWait wait = new HostFunctionWait(raw);
    for (Op op : Op.values()) {
      long x = op.size(bench.sizes);
      if (!bench.inBudget(op.sweep, "raw-jcuda", op.name() + " " + x)) {
        break;
      }
      List<CUdeviceptr> memory = new ArrayList<>();
      try (NativeCall call = NativeCall.of(op, x, raw.rtStream, bytes -> {
        CUdeviceptr p = raw.alloc(bytes);
        memory.add(p);
        return p;
      })) {
        point(bench, series(bench, op, "raw-jcuda", "call + synchronize"), op, x, i -> {
          call.launch();
          raw.sync();
        });
        point(bench, series(bench, op, "raw-jcuda", "call + host function"), op, x, i -> {
          call.launch();
          wait.await();
        });
      } finally {
        raw.sync();
        memory.forEach(raw::free);
        memory.clear();
      }
      if (op == Op.RNG) {
        continue;
      }
      // Diagnostic: the call in the costlier form NativeCall's 'formerly' describes, to see what that costs.
      try (NativeCall formerly = NativeCall.of(op, x, raw.rtStream, bytes -> {
        CUdeviceptr p = raw.alloc(bytes);
        memory.add(p);
        return p;
      }, true)) {
        point(bench, series(bench, op, "raw-jcuda", op == Op.FFT ? "call + synchronize, advanced layout (embeds given)"
          : "call + synchronize, math mode set and reset around it"), op, x, i -> {
            formerly.launch();
            raw.sync();
          });
      } finally {
        raw.sync();
        memory.forEach(raw::free);
      }
    }
  }

  @Override
  public void belowTheVerticle(Bench bench, DeviceOptions options) throws Exception {
    onTheContext(bench, options);
    tier(bench, TierRoundTrips.Tier.IN_PROCESS, options);
  }

  /** The raw call on the context's stream, completed through the context's completion path (cuda only). */
  private static void onTheContext(Bench bench, DeviceOptions options) throws Exception {
    DeviceContext context = BackendSelection.select(options).open(options.getDevice());
    try {
      CudaPointers pointers;
      try {
        pointers = CudaPointers.of(context);
      } catch (BackendException e) {
        for (Op op : Op.values()) {
          bench.record.skip(op.sweep, "context", "the library call on the context's stream needs the cuda backend");
        }
        return;
      }
      context.bindCurrentThread();
      GpuStream stream = context.createStream("bench");
      cudaStream_t onStream = new cudaStream_t(pointers.stream(stream));
      for (Op op : Op.values()) {
        long x = op.size(bench.sizes);
        if (!bench.inBudget(op.sweep, "context", op.name() + " " + x)) {
          break;
        }
        List<DeviceMemory> memory = new ArrayList<>();
        try (NativeCall call = NativeCall.of(op, x, onStream, bytes -> {
          try {
            DeviceMemory m = context.allocate(bytes);
            memory.add(m);
            return pointers.pointer(m, 0);
          } catch (BackendException e) {
            throw new IllegalStateException(e);
          }
        })) {
          point(bench, series(bench, op, "context", "call + completion"), op, x, i -> {
            call.launch();
            HopsSection.awaitCompletion(context, stream);
          });
        } finally {
          JCudaDriver.cuCtxSynchronize();
          for (DeviceMemory m : memory) {
            context.release(m);
          }
        }
      }
    } finally {
      context.close(false);
    }
  }

  /** In the process run: the same requests through a process tier of its own ({@link TierRoundTrips.Tier#PROCESS}). */
  @Override
  public void alone(Bench bench, DeviceOptions options) throws Exception {
    if (options.getIsolation() == Isolation.PROCESS) {
      tier(bench, TierRoundTrips.Tier.PROCESS, options);
    }
  }

  private static DeviceOptions withLibraries(DeviceOptions options) {
    return new DeviceOptions(options).setLibraries(List.of(Library.FFT, Library.RAND, Library.BLAS));
  }

  /** Library requests submitted straight into a context tier's queue, one at a time from this thread, which waits for each answer spinning ({@link TierRoundTrips#sequential}). */
  private static void tier(Bench bench, TierRoundTrips.Tier kind, DeviceOptions options) throws Exception {
    String path = kind.path;
    Vertx vertx = DeployedDevice.newVertx();
    try {
      ContextTier tier = await(kind.launch(vertx, withLibraries(options)));
      for (Op op : Op.values()) {
        long x = op.size(bench.sizes);
        if (!bench.inBudget(op.sweep, path, op.name() + " " + x)) {
          break;
        }
        List<BufferHandle> buffers = new ArrayList<>();
        Requests r = Requests.of(op, x, (type, elements) -> {
          BufferHandle h = (BufferHandle) await(TierRoundTrips.direct(tier, null, new AllocRequest(type, elements)));
          await(TierRoundTrips.direct(tier, null, FillRequest.of(h, 0.5)));
          buffers.add(h);
          return h;
        });
        Plan plan = plan(bench, TierRoundTrips.sequential(tier, new Plan(0, 3), r.library, r.body).getMinValue());
        bench.latency(series(bench, op, path, op.variant), x, op.name() + " " + x, plan,
          TierRoundTrips.sequential(tier, plan, r.library, r.body), false);
        for (BufferHandle h : buffers) {
          await(TierRoundTrips.direct(tier, null, new FreeRequest(h)));
        }
      }
      await(tier.stop());
    } finally {
      await(vertx.close());
    }
  }

  @Override
  public void toolkit(Bench bench, DeployedDevice d) throws Exception {
    for (Op op : Op.values()) {
      long x = op.size(bench.sizes);
      if (!bench.inBudget(op.sweep, d.path, op.name() + " " + x)) {
        break;
      }
      List<BufferHandle> buffers = new ArrayList<>();
      Requests r = Requests.of(op, x, (type, elements) -> {
        BufferHandle h = await(d.device.alloc(type, elements));
        await(d.device.fill(h, 0.5));
        buffers.add(h);
        return h;
      });
      IntFunction<Future<?>> request = i -> {
        switch (op) {
          case FFT:
            return d.fft.execute((FftRequest) r.body.apply(i));
          case RNG:
            return d.rand.generate((RandRequest) r.body.apply(i));
          default:
            return d.blas.execute((BlasRequest) r.body.apply(i));
        }
      };
      Plan plan = plan(bench, Histograms.sequential(d.vertx, new Plan(0, 3), request).getMinValue());
      bench.latency(series(bench, op, d.path, op.variant), x, op.name() + " " + x, plan,
        Histograms.sequential(d.vertx, plan, request), false);
      for (BufferHandle h : buffers) {
        await(d.device.free(h));
      }
    }
  }

  /** Where a request's buffers come from: a buffer of {@code elements} of {@code type}, filled. */
  private interface Buffers {
    BufferHandle take(DType type, long elements) throws Exception;
  }

  /** The requests of one op, as the tier and the typed clients take them: the library, and the body of the i-th. */
  private record Requests(Library library, IntFunction<Object> body) {

    static Requests of(Op op, long x, Buffers buffers) throws Exception {
      switch (op) {
        case FFT: {
          BufferHandle signal = buffers.take(DType.F32, 2 * x);
          FftRequest c2c = new FftRequest().setType(FftType.C2C).setDirection(FftDirection.FORWARD)
            .setN(List.of((int) x)).setBatch(1).setInput(signal).setOutput(signal);
          return new Requests(Library.FFT, i -> c2c);
        }
        case RNG: {
          BufferHandle numbers = buffers.take(DType.F32, x);
          // Each request continues the sequence, as the raw generator does.
          return new Requests(Library.RAND, i -> new RandRequest().setGenerator(RngType.PHILOX4_32_10).setSeed(SEED)
            .setOffset(i * x).setOutput(numbers));
        }
        default: {
          int n = (int) x;
          BufferHandle a = buffers.take(DType.F32, x * x);
          BufferHandle b = buffers.take(DType.F32, x * x);
          BufferHandle c = buffers.take(DType.F32, x * x);
          BlasRequest gemm = new BlasRequest(BlasOp.GEMM).setM(n).setN(n).setK(n).setA(a).setLda(n).setB(b)
            .setLdb(n).setC(c).setLdc(n).setTf32(true);
          return new Requests(Library.BLAS, i -> gemm);
        }
      }
    }
  }
}
