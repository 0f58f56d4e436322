package com.vertxcuda.bench;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.bench.result.Series;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;

import java.util.function.IntFunction;

import static com.vertxcuda.bench.Await.await;

/**
 * Sweeps {@code copy.h2d} and {@code copy.d2h}: copy bandwidth, one copy at a time, from 4 KiB to
 * 1 GiB, by the kind of host memory. Raw JCuda: pageable (a Java array) and page-locked
 * ({@code cuMemHostAlloc}). The toolkit: uploads from a heap buffer (staged) and from a transfer
 * buffer (page-locked in-process, the shared region in process isolation); downloads into the
 * buffer it lends, handed back after each.
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
    Series h2dPageable = series(bench, "copy.h2d", "raw-jcuda", "pageable");
    Series h2dPinned = series(bench, "copy.h2d", "raw-jcuda", "pinned");
    Series d2hPageable = series(bench, "copy.d2h", "raw-jcuda", "pageable");
    Series d2hPinned = series(bench, "copy.d2h", "raw-jcuda", "pinned");
    for (long n : bench.sizes.copySizes()) {
      if (!bench.inBudget("copy.h2d", "raw-jcuda", Bench.bytes(n))) {
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
    Series h2dHeap = series(bench, "copy.h2d", d.path, "heap");
    Series h2dTransfer = series(bench, "copy.h2d", d.path, "transfer buffer");
    Series d2h = series(bench, "copy.d2h", d.path, "lent buffer");
    Series h2dFloats = series(bench, "copy.h2d", d.path, "float[]");
    Series d2hFloats = series(bench, "copy.d2h", d.path, "float[]");
    for (long size : bench.sizes.copySizes()) {
      if (!bench.inBudget("copy.h2d", d.path, Bench.bytes(size))) {
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
        bench.record.skip("copy.h2d", d.path, "transfer buffer of " + Bench.bytes(n) + ": " + e.getMessage());
        transfer = null;
      }
      if (transfer != null) {
        Buffer data = transfer.appendBytes(new byte[n]);
        copies(bench, d, h2dTransfer, n, headline, i -> d.device.upload(h, data));
        d.verticle.releaseTransferBuffer(data);
      }
      copies(bench, d, d2h, n, headline, i -> d.device.download(h).map(d.verticle::releaseTransferBuffer));
      // Java arrays in one call each, into an F32 buffer: locally staged through the device's lent
      // transfer buffers in a ring of chunks (ChunkedTransfer), one bulk copy per byte.
      BufferHandle asFloats = await(d.device.alloc(DType.F32, n / 4));
      float[] array = new float[n / 4];
      copies(bench, d, h2dFloats, (long) n / 4 * 4, false, i -> d.device.upload(asFloats, array));
      copies(bench, d, d2hFloats, (long) n / 4 * 4, false, i -> d.device.downloadFloats(asFloats));
      await(d.device.free(asFloats));
    }
    await(d.device.free(whole));
  }

  private static void copies(Bench bench, DeployedDevice d, Series s, long bytes, boolean headline,
                             IntFunction<Future<?>> copy) throws Exception {
    Plan plan = bench.plan(Histograms.sequential(d.vertx, new Plan(0, 2), copy).getMinValue());
    bench.bandwidth(s, bytes, plan, Bench.measure(headline, () -> Histograms.sequential(d.vertx, plan, copy)));
  }

  private static Series series(Bench bench, String sweep, String path, String variant) {
    return bench.record.series(sweep, path, variant, "bandwidth", "GB/s", "copy size", "B");
  }
}
