package com.vertxcuda.bench;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.bench.result.Series;
import com.vertxcuda.internal.VertxInternals;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.IntFunction;

import static com.vertxcuda.bench.Await.await;

/**
 * Sweeps {@code copy.h2d} and {@code copy.d2h}: copy bandwidth, one copy at a time, from 4 KiB to
 * 1 GiB, by the kind of host memory. Raw JCuda: pageable (a Java array) and page-locked
 * ({@code cuMemHostAlloc}). The toolkit: uploads from a heap buffer (staged) and from a transfer
 * buffer (page-locked in-process, the shared region in process isolation); downloads into the
 * buffer it lends, handed back after each. And {@code copy.host.h2d} and {@code copy.host.d2h}, at
 * the sizes of {@link SweepSizes#hostCopySizes()}: every other host type the client takes, each
 * point short — uploads from a direct Buffer, heap and direct {@code ByteBuffer} and
 * {@code FloatBuffer}, and each Java array ({@code float[]} ... {@code short[]}); downloads into a
 * direct {@code ByteBuffer} and {@code FloatBuffer}, into an array kept from run to run
 * ({@code downloadInto} a wrapping NIO buffer: "float[] kept") and into a new array
 * ({@code downloadFloats} ...: "float[] new").
 */
final class CopySection implements Section {

  @Override
  public String name() {
    return "copy";
  }

  @Override
  public void raw(Bench bench, RawJCuda raw) throws Exception {
    long largest = bench.sizes.largestCopy();
    CUdeviceptr dev = raw.alloc(largest);
    Pointer pinned = raw.pinned(largest);
    Series h2dPageable = series(bench, H2D, "raw-jcuda", "pageable");
    Series h2dPinned = series(bench, H2D, "raw-jcuda", "pinned");
    Series d2hPageable = series(bench, D2H, "raw-jcuda", "pageable");
    Series d2hPinned = series(bench, D2H, "raw-jcuda", "pinned");
    for (long n : bench.sizes.copySizes()) {
      if (!bench.inBudget(H2D, "raw-jcuda", Bench.bytes(n))) {
        break;
      }
      Pointer array = Pointer.to(new byte[(int) n]);
      boolean headline = n == largest;
      copies(bench, h2dPageable, n, headline, i -> JCudaDriver.cuMemcpyHtoD(dev, array, n));
      copies(bench, h2dPinned, n, headline, i -> {
        JCudaDriver.cuMemcpyHtoDAsync(dev, pinned, n, raw.stream);
        raw.sync();
      });
      copies(bench, d2hPageable, n, headline, i -> JCudaDriver.cuMemcpyDtoH(array, dev, n));
      copies(bench, d2hPinned, n, headline, i -> {
        JCudaDriver.cuMemcpyDtoHAsync(pinned, dev, n, raw.stream);
        raw.sync();
      });
    }
    raw.freePinned(pinned);
    raw.free(dev);
  }

  /** One point; a {@code headline} one (the largest copy) measured {@link Bench#REPEATS} times. */
  private static void copies(Bench bench, Series s, long bytes, boolean headline, Histograms.Op copy)
    throws Exception {
    Plan plan = bench.plan(Histograms.loop(new Plan(0, 2), copy).getMinValue());
    bench.bandwidth(s, bytes, plan, Bench.measure(headline, () -> Histograms.loop(plan, copy)));
  }

  @Override
  public void toolkit(Bench bench, DeployedDevice d) throws Exception {
    BufferHandle whole = await(d.device.alloc(DType.U8, bench.sizes.largestCopy()));
    Series h2dHeap = series(bench, H2D, d.path, "heap");
    Series h2dTransfer = series(bench, H2D, d.path, "transfer buffer");
    Series d2h = series(bench, D2H, d.path, "lent buffer");
    for (long size : bench.sizes.copySizes()) {
      if (!bench.inBudget(H2D, d.path, Bench.bytes(size))) {
        break;
      }
      int n = (int) size;
      BufferHandle h = whole.view(0, n);
      Buffer heap = Buffer.buffer(new byte[n]);
      boolean headline = size == bench.sizes.largestCopy();
      copies(bench, d, h2dHeap, n, headline, i -> d.device.upload(h, heap));
      Buffer transfer;
      try {
        transfer = d.verticle.allocateTransferBuffer(n);
      } catch (CudaException e) {
        // In process isolation the shared region lends at most half its size (under 1 GiB).
        bench.record.skip(H2D, d.path, "transfer buffer of " + Bench.bytes(n) + ": " + e.getMessage());
        transfer = null;
      }
      if (transfer != null) {
        Buffer data = transfer.appendBytes(new byte[n]);
        copies(bench, d, h2dTransfer, n, headline, i -> d.device.upload(h, data));
        d.verticle.releaseTransferBuffer(data);
      }
      copies(bench, d, d2h, n, headline, i -> d.device.download(h).map(d.verticle::releaseTransferBuffer));
    }
    Map<String, Series> byHost = new HashMap<>();
    for (long size : bench.sizes.hostCopySizes()) {
      if (!bench.inBudget(H2D_BY_HOST, d.path, Bench.bytes(size))) {
        break;
      }
      byHostType(bench, d, byHost, whole.view(0, size), (int) size);
    }
    await(d.device.free(whole));
  }

  /**
   * {@code copy.host.h2d} and {@code copy.host.d2h} at {@code n} bytes: the host types beside the heap
   * Buffer, the transfer buffer and the lent buffer ({@code copy.h2d} / {@code copy.d2h} measure those
   * at every size): uploads from a direct Buffer, from heap and direct NIO buffers and from each Java
   * array; downloads into a direct NIO buffer, into an array kept from run to run and into a new array.
   * Each point a {@link Bench#shortPlan}: the sweep has many. {@code byHost} holds the series, by sweep and variant.
   */
  private static void byHostType(Bench bench, DeployedDevice d, Map<String, Series> byHost, BufferHandle bytes, int n)
    throws Exception {
    withDirectBuffer(n, data -> hostType(bench, d, byHost, H2D_BY_HOST, "direct Buffer", n,
      i -> d.device.upload(bytes, data)));
    for (ArrayType t : ArrayType.ALL) {
      if (!bench.inBudget(H2D_BY_HOST, d.path, t.name + " " + Bench.bytes(n))) {
        return;
      }
      BufferHandle typed = await(d.device.allocUninitialized(t.dtype, n / t.dtype.size()));
      Object kept = t.array.apply(n / t.dtype.size());
      hostType(bench, d, byHost, H2D_BY_HOST, t.name, n, i -> t.upload.upload(d.device, typed, kept));
      hostType(bench, d, byHost, D2H_BY_HOST, t.name + " kept", n,
        i -> d.device.downloadInto(typed, t.wrap.apply(kept)));
      hostType(bench, d, byHost, D2H_BY_HOST, t.name + " new", n, i -> t.download.apply(d.device, typed));
      await(d.device.free(typed));
    }
    if (!bench.inBudget(H2D_BY_HOST, d.path, "NIO buffers " + Bench.bytes(n))) {
      return;
    }
    ByteBuffer heapBytes = ByteBuffer.allocate(n);
    hostType(bench, d, byHost, H2D_BY_HOST, "ByteBuffer heap", n, i -> d.device.upload(bytes, heapBytes));
    ByteBuffer directBytes = ByteBuffer.allocateDirect(n);
    hostType(bench, d, byHost, H2D_BY_HOST, "ByteBuffer direct", n, i -> d.device.upload(bytes, directBytes));
    hostType(bench, d, byHost, D2H_BY_HOST, "ByteBuffer direct", n, i -> d.device.downloadInto(bytes, directBytes));
    BufferHandle floats = await(d.device.allocUninitialized(DType.F32, n / 4));
    FloatBuffer heapFloats = FloatBuffer.allocate(n / 4);
    hostType(bench, d, byHost, H2D_BY_HOST, "FloatBuffer heap", n, i -> d.device.upload(floats, heapFloats));
    FloatBuffer directFloats = ByteBuffer.allocateDirect(n).order(ByteOrder.nativeOrder()).asFloatBuffer();
    hostType(bench, d, byHost, H2D_BY_HOST, "FloatBuffer direct", n, i -> d.device.upload(floats, directFloats));
    hostType(bench, d, byHost, D2H_BY_HOST, "FloatBuffer direct", n,
      i -> d.device.downloadInto(floats, directFloats));
    await(d.device.free(floats));
  }

  /** What is done with a Buffer. */
  interface BufferUse {
    void accept(Buffer data) throws Exception;
  }

  /** Runs {@code use} with a direct Buffer of {@code n} zero bytes (over a direct ByteBuf), released after. */
  static void withDirectBuffer(int n, BufferUse use) throws Exception {
    ByteBuf direct = Unpooled.directBuffer(n, n).setZero(0, n).writerIndex(n);
    try {
      use.accept(VertxInternals.buffer(direct));
    } finally {
      direct.release();
    }
  }

  /** One host type's point: a short plan from one probe run, measured once. */
  private static void hostType(Bench bench, DeployedDevice d, Map<String, Series> byHost, String sweep, String variant,
                               long bytes, IntFunction<Future<?>> copy) throws Exception {
    Series s = byHost.computeIfAbsent(sweep + " " + variant, k -> series(bench, sweep, d.path, variant));
    Plan plan = bench.shortPlan(Histograms.sequential(d.vertx, new Plan(0, 1), copy).getMinValue());
    bench.bandwidth(s, bytes, plan, Histograms.sequential(d.vertx, plan, copy));
  }

  /** Uploads a Java array into a buffer of its dtype. */
  private interface ArrayUpload {
    Future<?> upload(DeviceClient client, BufferHandle target, Object array);
  }

  /**
   * A Java array type the client copies: the dtype its buffers hold, a new array of a count of
   * elements, its upload, the NIO view {@code downloadInto} fills, and the download into a new array.
   */
  private record ArrayType(String name, DType dtype, IntFunction<Object> array, ArrayUpload upload,
                           Function<Object, java.nio.Buffer> wrap, BiFunction<DeviceClient, BufferHandle, Future<?>> download) {

    static final List<ArrayType> ALL = List.of(
      new ArrayType("float[]", DType.F32, float[]::new, (c, h, a) -> c.upload(h, (float[]) a),
        a -> FloatBuffer.wrap((float[]) a), DeviceClient::downloadFloats),
      new ArrayType("double[]", DType.F64, double[]::new, (c, h, a) -> c.upload(h, (double[]) a),
        a -> DoubleBuffer.wrap((double[]) a), DeviceClient::downloadDoubles),
      new ArrayType("int[]", DType.I32, int[]::new, (c, h, a) -> c.upload(h, (int[]) a),
        a -> IntBuffer.wrap((int[]) a), DeviceClient::downloadInts),
      new ArrayType("long[]", DType.I64, long[]::new, (c, h, a) -> c.upload(h, (long[]) a),
        a -> LongBuffer.wrap((long[]) a), DeviceClient::downloadLongs),
      new ArrayType("short[]", DType.F16, short[]::new, (c, h, a) -> c.upload(h, (short[]) a),
        a -> ShortBuffer.wrap((short[]) a), DeviceClient::downloadShorts));
  }

  private static void copies(Bench bench, DeployedDevice d, Series s, long bytes, boolean headline,
                             IntFunction<Future<?>> copy) throws Exception {
    Plan plan = bench.plan(Histograms.sequential(d.vertx, new Plan(0, 2), copy).getMinValue());
    bench.bandwidth(s, bytes, plan, Bench.measure(headline, () -> Histograms.sequential(d.vertx, plan, copy)));
  }

  static final String H2D = "copy.h2d";
  static final String D2H = "copy.d2h";
  static final String H2D_BY_HOST = "copy.host.h2d";
  static final String D2H_BY_HOST = "copy.host.d2h";

  private static Series series(Bench bench, String sweep, String path, String variant) {
    return bench.record.series(sweep, path, variant, "bandwidth", "GB/s", "copy size", "B");
  }
}
