package com.vertxcuda.bench;

import com.vertxcuda.BufferHandle;
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
 * Sweep {@code roundtrip.payload}: the round trip of a payload of 4 B to 64 MiB — upload it, download
 * it back, done when the bytes are in host memory — with its latency distribution at each size.
 * Raw JCuda copies from and to page-locked memory with one synchronize; the toolkit uploads a
 * transfer buffer and downloads into the buffer it lends.
 */
final class PayloadSection implements Section {

  static final String SWEEP = "roundtrip.payload";

  @Override
  public String name() {
    return "payload";
  }

  @Override
  public void raw(Bench bench, RawJCuda raw) throws Exception {
    int largest = bench.sizes.largestPayload();
    Pointer host = raw.pinned(largest);
    CUdeviceptr dev = raw.alloc(largest);
    Series s = series(bench, "raw-jcuda", "pinned, one synchronize");
    for (int n : bench.sizes.payloads()) {
      if (!bench.inBudget(SWEEP, s.path(), Bench.bytes(n))) {
        break;
      }
      Histograms.Op echo = i -> {
        JCudaDriver.cuMemcpyHtoDAsync(dev, host, n, raw.stream);
        JCudaDriver.cuMemcpyDtoHAsync(host, dev, n, raw.stream);
        raw.sync();
      };
      Plan plan = bench.plan(Histograms.loop(new Plan(0, 3), echo).getMinValue());
      bench.latency(s, n, Bench.bytes(n), plan, Histograms.loop(plan, echo), n <= 4);
    }
    raw.free(dev);
    raw.freePinned(host);
  }

  @Override
  public void toolkit(Bench bench, DeployedDevice d) throws Exception {
    BufferHandle whole = await(d.device.alloc(DType.U8, bench.sizes.largestPayload()));
    Series s = series(bench, d.path, "transfer buffer");
    for (int n : bench.sizes.payloads()) {
      if (!bench.inBudget(SWEEP, s.path(), Bench.bytes(n))) {
        break;
      }
      BufferHandle h = whole.view(0, n);
      Buffer data = d.verticle.allocateTransferBuffer(n);
      data.appendBytes(new byte[n]);
      IntFunction<Future<?>> echo = i -> d.device.upload(h, data)
        .compose(x -> d.device.download(h)).map(d.verticle::releaseTransferBuffer);
      Plan plan = bench.plan(Histograms.sequential(d.vertx, new Plan(0, 3), echo).getMinValue());
      bench.latency(s, n, Bench.bytes(n), plan, Histograms.sequential(d.vertx, plan, echo), n <= 4);
      d.verticle.releaseTransferBuffer(data);
    }
    await(d.device.free(whole));
  }

  private static Series series(Bench bench, String path, String variant) {
    return bench.record.series(SWEEP, path, variant, "latency", "us", "payload", "B");
  }
}
