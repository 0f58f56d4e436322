package com.vertxcuda.samples.cluster;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.message.DeviceInfo;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Remote round trips on one host: this JVM is the client, a {@link GpuNode} in a second JVM serves a
 * device and a plain Vert.x echo consumer. Measures, one request at a time, the echo of a 1 KiB buffer
 * against a fill of a 1 KiB device buffer (p50/p99 of 5,000 after 2,000 warm-up), and 64 MiB up and
 * down through the device against 64 MiB echoed in 8 MiB messages. Prints {@code [figure]} lines.
 *
 * <pre>java -cp ... com.vertxcuda.samples.cluster.ClusterBench [backend: auto|host|cuda] [cluster options of the node, e.g. --cluster-manager infinispan ...]</pre>
 */
public final class ClusterBench {

  private ClusterBench() {
  }

  public static void main(String[] args) throws Exception {
    String backend = args.length > 0 ? args[0] : "auto";
    ClusterSettings settings = new ClusterSettings();
    new picocli.CommandLine(settings).setCaseInsensitiveEnumValuesAllowed(true)
      .parseArgs(Arrays.copyOfRange(args, Math.min(1, args.length), args.length));
    settings.name = "vertx-cuda-bench-" + ProcessHandle.current().pid();
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
      "-Xmx4g", "-cp", System.getProperty("java.class.path"), GpuNode.class.getName(), "--echo", "--backend", backend,
      "--device-option", "hostMemory=" + (1L << 30)));
    command.addAll(settings.arguments());
    Process node = new ProcessBuilder(command).redirectErrorStream(true).start();
    try {
      String nodeId = waitReady(node);
      Vertx vertx = settings.start().toCompletionStage().toCompletableFuture().get();
      DeviceInfo device = null;
      for (int i = 0; i < 600 && device == null; i++) {
        for (DeviceInfo d : get(DeviceRegistry.list(vertx))) {
          if (d.getNode().equals(nodeId)) {
            device = d;
          }
        }
        Thread.sleep(100);
      }
      DeviceClient c = DeviceClient.create(vertx, device);
      System.out.println("[figure] cluster bench: client JVM -> GPU node JVM on 127.0.0.1, device " + device.getName()
        + " (" + device.getBackend() + ", " + device.getIsolation() + ")");
      Buffer kib = Buffer.buffer(new byte[1024]);
      BufferHandle small = get(c.alloc(DType.U8, 1024));
      DeliveryOptions delivery = new DeliveryOptions().setSendTimeout(30_000);
      long[] echo = rounds(() -> vertx.eventBus().request(GpuNode.ECHO, kib, delivery));
      long[] fill = rounds(() -> c.fill(small, 1));
      System.out.printf("[figure] remote 1 KiB round trip, 5000 sequential: plain Vert.x clustered echo p50 %.1f p99 %.1f us;"
          + " vertx-cuda fill p50 %.1f p99 %.1f us; ratio p50 %.2f%n",
        at(echo, 0.5), at(echo, 0.99), at(fill, 0.5), at(fill, 0.99), at(fill, 0.5) / at(echo, 0.5));

      int size = 64 << 20;
      Buffer data = Buffer.buffer(new byte[size]);
      BufferHandle big = get(c.alloc(DType.U8, size));
      get(c.upload(big, data));
      get(c.download(big));
      double up = Double.MAX_VALUE;
      double down = Double.MAX_VALUE;
      double echoed = Double.MAX_VALUE;
      for (int r = 0; r < 3; r++) {
        long t0 = System.nanoTime();
        get(c.upload(big, data));
        long t1 = System.nanoTime();
        get(c.download(big));
        long t2 = System.nanoTime();
        List<Future<?>> parts = new ArrayList<>();
        for (int off = 0; off < size; off += 8 << 20) {
          parts.add(vertx.eventBus().request(GpuNode.ECHO, data.slice(off, off + (8 << 20)), delivery));
        }
        get(Future.all(parts));
        long t3 = System.nanoTime();
        up = Math.min(up, (t1 - t0) / 1e9);
        down = Math.min(down, (t2 - t1) / 1e9);
        echoed = Math.min(echoed, (t3 - t2) / 1e9);
      }
      System.out.printf("[figure] remote 64 MiB (best of 3): upload %.2f GB/s, download %.2f GB/s;"
          + " plain Vert.x echo of 64 MiB in 8 MiB messages (there and back) %.2f GB/s each way%n",
        size / up / 1e9, size / down / 1e9, size / (echoed / 2) / 1e9);
      get(c.free(big));
      get(c.free(small));
      get(vertx.close());
    } finally {
      node.destroyForcibly();
      node.waitFor(30, TimeUnit.SECONDS);
    }
    System.exit(0);
  }

  private static String waitReady(Process node) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8));
    java.util.ArrayDeque<String> last = new java.util.ArrayDeque<>();
    for (String line; (line = in.readLine()) != null; ) {
      last.addLast(line);
      if (last.size() > 40) {
        last.removeFirst();
      }
      if (line.startsWith("READY ")) {
        Thread drain = new Thread(() -> {
          try {
            while (in.readLine() != null) {
              // discard the node's log
            }
          } catch (java.io.IOException ignored) {
            // gone
          }
        });
        drain.setDaemon(true);
        drain.start();
        return line.substring(6).trim();
      }
    }
    throw new IllegalStateException("the GPU node exited before it was ready; its last lines:\n" + String.join("\n", last));
  }

  private static long[] rounds(java.util.function.Supplier<Future<?>> call) throws Exception {
    for (int i = 0; i < 2000; i++) {
      get(call.get());
    }
    long[] ns = new long[5000];
    for (int i = 0; i < ns.length; i++) {
      long t0 = System.nanoTime();
      get(call.get());
      ns[i] = System.nanoTime() - t0;
    }
    Arrays.sort(ns);
    return ns;
  }

  private static double at(long[] sorted, double q) {
    return sorted[(int) Math.min(sorted.length - 1, Math.round(q * (sorted.length - 1)))] / 1e3;
  }

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }
}
