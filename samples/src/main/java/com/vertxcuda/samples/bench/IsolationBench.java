package com.vertxcuda.samples.bench;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.message.DeviceEvent;
import com.vertxcuda.message.DeviceInfo;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * Process isolation against in-process, in one run: the small-request round trip (fill 1 KiB:
 * request → device done → reply), 256 MiB upload and download (through the shared region in process
 * mode), and the time from a device host's death (kill -9) to a ready device.
 *
 * <p>Arguments: backend (auto|host|cuda, default auto), optional output file.
 */
public final class IsolationBench {

  private static final int SMALL_WARMUP = 500;
  private static final int SMALL_RUNS = 5000;
  private static final int BIG = 256 << 20;
  private static final int BIG_RUNS = 5;
  private static final int KILLS = 5;

  private IsolationBench() {
  }

  public static void main(String[] args) throws Exception {
    BackendKind backend = BackendKind.valueOf((args.length > 0 ? args[0] : "auto").toUpperCase());
    StringBuilder out = new StringBuilder();
    out.append(String.format("# vertx-cuda isolation benchmark, backend=%s, java %s, %d cores%n",
      backend.name().toLowerCase(), System.getProperty("java.version"), Runtime.getRuntime().availableProcessors()));
    out.append(run("in-process", backend, Isolation.IN_PROCESS, false, false));
    out.append(run("process (tcp link)", backend, Isolation.PROCESS, false, false));
    out.append(run("process (unix link)", backend, Isolation.PROCESS, true, false));
    out.append(run("process (unix, spare)", backend, Isolation.PROCESS, true, true));
    System.out.print(out);
    if (args.length > 1) {
      Files.writeString(Path.of(args[1]), out.toString());
    }
    System.exit(0);
  }

  private static String run(String label, BackendKind backend, Isolation isolation, boolean nativeTransport,
                            boolean spare) {
    Vertx vertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(nativeTransport));
    if (nativeTransport && !vertx.isNativeTransportEnabled()) {
      vertx.close().await();
      return String.format("%-22s skipped: no native transport%n", label);
    }
    DeviceOptions options = new DeviceOptions().setBackend(backend).setIsolation(isolation)
      .setHostMemory(2L << 30).setSharedMemorySize(1L << 30).setRestartLimit(100).setSpareDeviceHost(spare);
    DeviceVerticle device = new DeviceVerticle(options);
    StringBuilder sb = new StringBuilder();
    try {
      vertx.deployVerticle(device).await();
      DeviceClient c = DeviceClient.create(vertx);
      DeviceInfo info = c.describe().await();
      BufferHandle small = c.alloc(DType.F32, 256).await();
      long[] lat = new long[SMALL_RUNS];
      for (int i = 0; i < SMALL_WARMUP + SMALL_RUNS; i++) {
        long t0 = System.nanoTime();
        c.fill(small, i).await();
        if (i >= SMALL_WARMUP) {
          lat[i - SMALL_WARMUP] = System.nanoTime() - t0;
        }
      }
      Arrays.sort(lat);
      BufferHandle big = c.alloc(DType.U8, BIG).await();
      Buffer src = transferBuffer(device, BIG);
      double up = 0;
      double down = 0;
      for (int r = 0; r < BIG_RUNS; r++) {
        long t0 = System.nanoTime();
        c.upload(big, src).await();
        up = Math.max(up, BIG / ((System.nanoTime() - t0) / 1e9));
        t0 = System.nanoTime();
        Buffer back = c.download(big).await();
        down = Math.max(down, BIG / ((System.nanoTime() - t0) / 1e9));
        if (back.getByte(BIG - 1) != src.getByte(BIG - 1)) {
          throw new IllegalStateException("download differs from upload");
        }
        device.releaseTransferBuffer(back);
      }
      sb.append(String.format(Locale.ROOT, "%-22s %s/%s pid %d: fill 1 KiB round trip p50 %.1f us, p99 %.1f us;"
          + " 256 MiB upload %.2f GB/s, download %.2f GB/s (best of %d)%n", label, info.getBackend(),
        info.getIsolation(), info.getPid(), lat[SMALL_RUNS / 2] / 1e3, lat[SMALL_RUNS * 99 / 100] / 1e3,
        up / 1e9, down / 1e9, BIG_RUNS));
      if (isolation == Isolation.PROCESS) {
        sb.append(deathToReady(vertx, c, spare));
      }
    } catch (Throwable t) {
      sb.append(String.format("%-22s failed: %s%n", label, t));
    } finally {
      vertx.close().await();
    }
    return sb.toString();
  }

  /** kill -9 the device host, then time until the generation-changed event and a served request. */
  private static String deathToReady(Vertx vertx, DeviceClient c, boolean spare) {
    long[] toEvent = new long[KILLS];
    long[] toServed = new long[KILLS];
    for (int k = 0; k < KILLS; k++) {
      if (spare) {
        sleep(5000); // the spare device host of the new generation starts meanwhile
      }
      DeviceInfo info = c.describe().await();
      Promise<DeviceEvent> changed = Promise.promise();
      var sub = c.events(e -> {
        if (e.getType() == DeviceEvent.Type.GENERATION_CHANGED) {
          changed.tryComplete(e);
        }
      });
      sub.completion().await();
      long t0 = System.nanoTime();
      ProcessHandle.of(info.getPid()).ifPresent(ProcessHandle::destroyForcibly);
      changed.future().await();
      toEvent[k] = System.nanoTime() - t0;
      c.alloc(DType.F32, 1).await();
      toServed[k] = System.nanoTime() - t0;
      sub.unregister().await();
    }
    Arrays.sort(toEvent);
    Arrays.sort(toServed);
    return String.format(Locale.ROOT, "%-22s kill -9 → generation changed: median %.0f ms, max %.0f ms;"
        + " → first request served: median %.0f ms, max %.0f ms (%d kills)%n", "", toEvent[KILLS / 2] / 1e6,
      toEvent[KILLS - 1] / 1e6, toServed[KILLS / 2] / 1e6, toServed[KILLS - 1] / 1e6, KILLS);
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static Buffer transferBuffer(DeviceVerticle device, int bytes) {
    Buffer b = device.allocateTransferBuffer(bytes);
    for (int i = 0; i < bytes / 8; i++) {
      b.appendLongLE(i * 0x9E3779B97F4A7C15L);
    }
    return b;
  }
}
