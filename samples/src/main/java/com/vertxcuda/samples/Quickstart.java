package com.vertxcuda.samples;

import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;

/**
 * Deploys device 0 (cuda where a GPU is usable, otherwise the host backend), allocates, uploads,
 * copies, fills a view, downloads, checks the bytes and prints what ran where. Exits 0 on success.
 * An optional argument picks the isolation: {@code auto} (default), {@code in_process} or
 * {@code process} ({@code mvn -pl samples exec:java -Dexec.args=process}).
 */
public final class Quickstart {

  private Quickstart() {
  }

  public static void main(String[] args) throws Exception {
    Vertx vertx = Vertx.vertx();
    int n = 1 << 20;
    long started = System.nanoTime();
    DeviceOptions options = new DeviceOptions();
    if (args.length > 0) {
      options.setIsolation(Isolation.valueOf(args[0].toUpperCase(java.util.Locale.ROOT)));
    }
    Future<String> run = vertx.deployVerticle(new DeviceVerticle(options))
      .compose(id -> {
        DeviceClient device = DeviceClient.create(vertx);
        return device.describe().compose(info -> {
          System.out.printf("device %s: %s, backend %s, %s, generation %d, %d MiB%n", info.getAddress(),
            info.getName(), info.getBackend(), info.getIsolation(), info.getGeneration(), info.getTotalMemory() >> 20);
          Buffer input = Buffer.buffer(n * 4);
          for (int i = 0; i < n; i++) {
            input.appendFloatLE(i);
          }
          return device.alloc(DType.F32, n).compose(a -> device.alloc(DType.F32, n).compose(b ->
            device.upload(a, input)
              .compose(x -> device.copy(a, b))
              .compose(x -> device.fill(b.view(0, 1000), -1.0))
              .compose(x -> device.download(b))
              .compose(out -> {
                for (int i = 0; i < n; i++) {
                  float expected = i < 1000 ? -1f : i;
                  if (out.getFloatLE(i * 4) != expected) {
                    return Future.failedFuture("element " + i + " is " + out.getFloatLE(i * 4) + ", expected " + expected);
                  }
                }
                return device.stats();
              })
              .map(stats -> String.format("uploaded, copied, filled and downloaded %d floats: bytes checked; "
                  + "%d buffers (%d bytes) live, %d requests served, %.1f ms in all", n, stats.getBuffersAllocated(),
                stats.getBytesAllocated(), stats.getOperationsServed(), (System.nanoTime() - started) / 1e6))));
        });
      });
    int code;
    try {
      System.out.println(run.await());
      code = 0;
    } catch (Throwable t) {
      System.err.println("quickstart failed: " + t.getMessage());
      code = 1;
    }
    vertx.close().await();
    System.exit(code);
  }
}
