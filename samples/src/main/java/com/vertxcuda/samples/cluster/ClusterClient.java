package com.vertxcuda.samples.cluster;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.PlacementPolicy;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.internal.Nodes;
import com.vertxcuda.DeviceInfo;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A client node with no GPU: joins the cluster, waits for a device, picks the least loaded one, and
 * multiplies two matrices there (upload, SGEMM, download, check against the CPU, free). Exits 0
 * when the product is right.
 *
 * <p>{@code --hold BYTES} instead allocates that much on the chosen device, prints {@code HELD
 * <node id>} and waits (to show what happens to a departed client's memory).
 */
@Command(name = "client", mixinStandardHelpOptions = true, description = "Use the cluster's GPUs from a node without one.")
public final class ClusterClient implements Callable<Integer> {

  @Mixin
  ClusterSettings cluster = new ClusterSettings();

  @Option(names = "--n", description = "matrix size (default ${DEFAULT-VALUE})")
  int n = 256;

  @Option(names = "--wait", description = "seconds to wait for a ready device (default ${DEFAULT-VALUE})")
  int waitSeconds = 60;

  @Option(names = "--hold", description = "allocate this many bytes, print HELD and wait")
  long hold;

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  /** The largest {@code --n}: n² floats in one array. */
  static final int MAX_N = 16_383;

  public static void main(String[] args) {
    System.exit(new CommandLine(new ClusterClient()).setCaseInsensitiveEnumValuesAllowed(true).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    // Checked before joining the cluster: a wrong number is the command line's, said at once.
    if (n < 1 || n > MAX_N) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--n must be between 1 and " + MAX_N + ", not " + n);
    }
    if (waitSeconds < 0) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--wait must not be negative, not " + waitSeconds);
    }
    if (hold < 0) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--hold must not be negative, not " + hold);
    }
    Vertx vertx = cluster.start().toCompletionStage().toCompletableFuture().get();
    try {
      DeviceInfo device = waitForDevice(vertx).toCompletionStage().toCompletableFuture().get(waitSeconds + 5L, TimeUnit.SECONDS);
      System.out.println("using " + device.getAddress() + " (" + device.getName() + ", " + device.getBackend() + ", "
        + device.getIsolation() + ")");
      DeviceClient gpu = DeviceClient.create(vertx, device);
      if (hold > 0) {
        gpu.alloc(DType.U8, hold).toCompletionStage().toCompletableFuture().get();
        System.out.println("HELD " + Nodes.self(vertx));
        System.out.flush();
        new CountDownLatch(1).await();
      }
      long t0 = System.nanoTime();
      boolean ok = multiply(vertx, gpu, device).toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
      System.out.printf("%dx%d SGEMM on %s: %s in %.1f ms%n", n, n, device.getAddress(), ok ? "OK" : "FAILED",
        (System.nanoTime() - t0) / 1e6);
      return ok ? 0 : 1;
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private Future<DeviceInfo> waitForDevice(Vertx vertx) {
    Promise<DeviceInfo> found = Promise.promise();
    long deadline = System.currentTimeMillis() + waitSeconds * 1000L;
    long[] timer = new long[1];
    timer[0] = vertx.setPeriodic(0, 250, id -> DeviceRegistry.choose(vertx, PlacementPolicy.leastLoaded())
      .onSuccess(d -> {
        vertx.cancelTimer(timer[0]);
        found.tryComplete(d);
      })
      .onFailure(t -> {
        if (System.currentTimeMillis() > deadline) {
          vertx.cancelTimer(timer[0]);
          found.tryFail(t);
        }
      }));
    return found.future();
  }

  private Future<Boolean> multiply(Vertx vertx, DeviceClient gpu, DeviceInfo device) {
    float[] a = new float[n * n];
    float[] b = new float[n * n];
    Random random = new Random(42);
    for (int i = 0; i < a.length; i++) {
      a[i] = random.nextFloat() - 0.5f;
      b[i] = random.nextFloat() - 0.5f;
    }
    BlasClient blas = BlasClient.create(vertx, new DeviceClientOptions().setNode(device.getNode()).setDevice(device.getDevice()));
    return Future.all(gpu.alloc(DType.F32, (long) n * n), gpu.alloc(DType.F32, (long) n * n), gpu.alloc(DType.F32, (long) n * n))
      .compose(all -> {
        List<BufferHandle> h = all.list();
        return gpu.upload(h.get(0), floats(a))
          .compose(x -> gpu.upload(h.get(1), floats(b)))
          // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: swap the operands.
          .compose(x -> blas.gemm(Transpose.N, Transpose.N, n, n, n, 1, h.get(1), n, h.get(0), n, 0, h.get(2), n))
          .compose(x -> gpu.download(h.get(2)))
          .map(c -> check(a, b, c))
          .eventually(() -> Future.join(gpu.free(h.get(0)), gpu.free(h.get(1)), gpu.free(h.get(2))));
      });
  }

  private boolean check(float[] a, float[] b, Buffer c) {
    double worst = 0;
    for (int i = 0; i < n; i += Math.max(1, n / 16)) {
      for (int j = 0; j < n; j++) {
        double expected = 0;
        for (int k = 0; k < n; k++) {
          expected += (double) a[i * n + k] * b[k * n + j];
        }
        worst = Math.max(worst, Math.abs(expected - c.getFloatLE((i * n + j) * 4)));
      }
    }
    return worst < 1e-3 * n;
  }

  private static Buffer floats(float[] v) {
    ByteBuffer bytes = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
    bytes.asFloatBuffer().put(v);
    return Buffer.buffer(bytes.array());
  }
}
