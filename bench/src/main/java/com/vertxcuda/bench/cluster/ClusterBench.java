package com.vertxcuda.bench.cluster;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.internal.CudaRuntime;
import com.vertxcuda.internal.TlsEngines;
import com.vertxcuda.samples.cluster.ClusterSettings;
import com.vertxcuda.samples.cluster.GpuNode;
import com.vertxcuda.samples.cluster.StreamAnchor;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.netty.handler.ssl.OpenSsl;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.net.OpenSSLEngineOptions;
import picocli.CommandLine;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Remote round trips on one host: this JVM is the client, a {@link GpuNode} in a second JVM serves a
 * device, a plain Vert.x echo consumer and a plain TCP sink ({@link StreamAnchor}). Measures, one
 * request at a time, the echo of a 1 KiB buffer against a fill of a 1 KiB device buffer (after 2,000
 * warm-up each, three repeats taking turns, p50/p99 of 5,000 each, and the median of the repeats'
 * ratios), 64 MiB echoed in 8 MiB messages, and for each bulk size (64 MiB and
 * 1 GiB; {@code -Dvertx-cuda.bench.bulk=64} for a small budget) a raw TCP stream between the two JVMs
 * each way beside the toolkit's remote upload and download of that size through the side channel,
 * each with its ratio to its own anchor. Then the bulk part again on a cluster whose event bus (and so
 * the side channel and the anchor) runs over TLS, once per TLS engine (the JDK's, then OpenSSL where
 * netty-tcnative loads), each transfer with its ratio to the same transfer on the plain bus, and a
 * line that puts the engines side by side. Prints {@code [figure]} lines.
 *
 * <pre>java -Xmx6g -cp ... com.vertxcuda.bench.cluster.ClusterBench [backend: auto|host|cuda] [cluster options of the node, e.g. --cluster-manager infinispan ...]</pre>
 */
public final class ClusterBench {

  private ClusterBench() {
  }

  /** MiB of the bulk transfers measured, comma-separated (a small budget: {@code -Dvertx-cuda.bench.bulk=64}). */
  static final String BULK_PROPERTY = "vertx-cuda.bench.bulk";

  public static void main(String[] args) throws Exception {
    String backend = args.length > 0 ? args[0] : "auto";
    String[] clusterArgs = Arrays.copyOfRange(args, Math.min(1, args.length), args.length);
    List<Long> bulk = new ArrayList<>();
    for (String mib : System.getProperty(BULK_PROPERTY, "64,1024").split(",")) {
      bulk.add(Long.parseLong(mib.trim()) << 20);
    }
    ClusterSettings plain = settings(clusterArgs, "plain");
    Map<Long, double[]> plainRates = run(plain, backend, bulk, true, null);
    // The same over TLS: a key store made here, the event bus (and so the side channel and the anchor)
    // on it, once per engine.
    Path keys = Files.createTempDirectory("vertx-cuda-bench");
    Path store = keys.resolve("node.p12");
    Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
      "-genkeypair", "-alias", "node", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
      "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2", "-storetype", "PKCS12",
      "-keystore", store.toString(), "-storepass", "bench-secret", "-keypass", "bench-secret")
      .redirectErrorStream(true).start();
    if (keytool.waitFor() != 0) {
      throw new IllegalStateException(new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }
    Map<String, Map<Long, double[]>> tlsRates = new LinkedHashMap<>();
    for (ClusterSettings.TlsEngine engine : List.of(ClusterSettings.TlsEngine.JDK, ClusterSettings.TlsEngine.OPENSSL)) {
      String name = engine == ClusterSettings.TlsEngine.JDK ? "JDK" : "OpenSSL";
      if (engine == ClusterSettings.TlsEngine.OPENSSL && !OpenSSLEngineOptions.isAvailable()) {
        System.out.println("[figure] bulk over TLS on OpenSSL: not measured, OpenSSL does not load here ("
          + OpenSsl.unavailabilityCause() + ")");
        continue;
      }
      ClusterSettings tls = settings(clusterArgs, "tls-" + name.toLowerCase(Locale.ROOT));
      tls.setTls(store.toString(), "bench-secret").setTlsEngine(engine);
      tlsRates.put(name, run(tls, backend, bulk, false, plainRates));
    }
    for (long size : bulk) {
      StringBuilder line = new StringBuilder("[figure] bulk " + (size >> 20) + " MiB over TLS, to plain (side channel):");
      tlsRates.forEach((name, rates) -> line.append(String.format(" %s upload %.2f download %.2f;", name,
        rates.get(size)[0] / plainRates.get(size)[0], rates.get(size)[1] / plainRates.get(size)[1])));
      System.out.println(line.substring(0, line.length() - 1));
    }
    Files.deleteIfExists(store);
    Files.deleteIfExists(keys);
    System.exit(0);
  }

  private static ClusterSettings settings(String[] args, String suffix) {
    ClusterSettings settings = new ClusterSettings();
    new CommandLine(settings).setCaseInsensitiveEnumValuesAllowed(true).parseArgs(args);
    settings.setName("vertx-cuda-bench-" + ProcessHandle.current().pid() + "-" + suffix);
    return settings;
  }

  // One cluster of this JVM and a GPU node JVM: the small round trips (plain only), then bulk. Returns
  // the side channel's upload and download rate (bytes per second) per bulk size; a TLS run prints
  // each beside the plain run's (plain).
  private static Map<Long, double[]> run(ClusterSettings settings, String backend, List<Long> bulk, boolean small,
      Map<Long, double[]> plain) throws Exception {
    long largest = bulk.stream().mapToLong(Long::longValue).max().orElse(64L << 20);
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
      "-Xmx" + Math.max(4, (largest >> 30) * 3 + 2) + "g", "-cp", System.getProperty("java.class.path"),
      GpuNode.class.getName(), "--echo", "--backend", backend,
      "--device-option", "hostMemory=" + (largest + (256L << 20))));
    command.addAll(settings.arguments());
    Process node = new ProcessBuilder(command).redirectErrorStream(true).start();
    Map<Long, double[]> rates = new LinkedHashMap<>();
    try {
      String nodeId = waitReady(node);
      Vertx vertx = settings.start().toCompletionStage().toCompletableFuture().get();
      String wire = settings.tls() ? "TLS on " + TlsEngines.name(CudaRuntime.of(vertx).bulkTlsEngine()) : "plain";
      DeviceInfo device = null;
      for (int i = 0; i < 600 && device == null; i++) {
        for (DeviceInfo d : get(DeviceRegistry.list(vertx))) {
          if (d.getNode().equals(nodeId)) {
            device = d;
          }
        }
        Thread.sleep(100);
      }
      DeviceClient c = DeviceClient.create(vertx, new DeviceClientOptions().setNode(device.getNode())
        .setDevice(device.getDevice()).setTimeout(120_000));
      System.out.println("[figure] cluster bench (" + wire + " event bus): client JVM -> GPU node JVM on 127.0.0.1, device "
        + device.getName() + " (" + device.getBackend() + ", " + device.getIsolation() + "), side channel at "
        + device.getBulkAddress());
      DeliveryOptions delivery = new DeliveryOptions().setSendTimeout(30_000);
      if (small) {
        Buffer kib = Buffer.buffer(new byte[1024]);
        BufferHandle one = get(c.alloc(DType.U8, 1024));
        rounds(() -> vertx.eventBus().request(GpuNode.ECHO, kib, delivery), WARM_UP);
        rounds(() -> c.fill(one, 1), WARM_UP);
        // Repeats that take turns, so the echo and the fill see the same host; the goal is judged on
        // the median of the repeats' ratios.
        double[] p50 = new double[REPEATS];
        double[] p99 = new double[REPEATS];
        for (int r = 0; r < REPEATS; r++) {
          long[] echo = rounds(() -> vertx.eventBus().request(GpuNode.ECHO, kib, delivery), ROUNDS);
          long[] fill = rounds(() -> c.fill(one, 1), ROUNDS);
          p50[r] = at(fill, 0.5) / at(echo, 0.5);
          p99[r] = at(fill, 0.99) / at(echo, 0.99);
          System.out.printf("[figure] remote 1 KiB round trip, repeat %d of %d, %d sequential each: plain Vert.x clustered echo"
              + " p50 %.1f p99 %.1f us; vertx-cuda fill p50 %.1f p99 %.1f us; ratio p50 %.2f p99 %.2f%n",
            r + 1, REPEATS, ROUNDS, at(echo, 0.5), at(echo, 0.99), at(fill, 0.5), at(fill, 0.99), p50[r], p99[r]);
        }
        System.out.printf("[figure] remote 1 KiB round trip over the clustered echo, median of %d repeats: p50 %.2f (%.2f - %.2f),"
            + " p99 %.2f (%.2f - %.2f)%n", REPEATS, median(p50), min(p50), max(p50), median(p99), min(p99), max(p99));
        get(c.free(one));
        // The event bus's own bulk pace: 64 MiB echoed in 8 MiB messages.
        int size = 64 << 20;
        Buffer data = Buffer.buffer(new byte[size]);
        double echoed = Double.MAX_VALUE;
        for (int r = 0; r < 3; r++) {
          long t0 = System.nanoTime();
          List<Future<?>> parts = new ArrayList<>();
          for (int off = 0; off < size; off += 8 << 20) {
            parts.add(vertx.eventBus().request(GpuNode.ECHO, data.slice(off, off + (8 << 20)), delivery));
          }
          get(Future.all(parts));
          echoed = Math.min(echoed, (System.nanoTime() - t0) / 1e9);
        }
        System.out.printf("[figure] plain Vert.x clustered echo of 64 MiB in 8 MiB messages (there and back): %.2f GB/s each way%n",
          size / (echoed / 2) / 1e9);
      }
      String sink = (String) get(vertx.eventBus().request(StreamAnchor.ADDRESS, "", delivery)).body();
      for (long size : bulk) {
        int rounds = size <= (256L << 20) ? 5 : 2;
        Buffer data = Buffer.buffer(new byte[(int) size]);
        BufferHandle big = get(c.alloc(DType.U8, size));
        double rawUp = Double.MAX_VALUE;
        double rawDown = Double.MAX_VALUE;
        double up = Double.MAX_VALUE;
        double down = Double.MAX_VALUE;
        // Round 0 warms both paths; the anchor and the toolkit take turns, so both see the same host.
        for (int r = 0; r <= rounds; r++) {
          double ru = get(StreamAnchor.time(vertx, sink, true, size));
          long t0 = System.nanoTime();
          get(c.upload(big, data));
          double u = (System.nanoTime() - t0) / 1e9;
          double rd = get(StreamAnchor.time(vertx, sink, false, size));
          long t1 = System.nanoTime();
          get(c.download(big));
          double d = (System.nanoTime() - t1) / 1e9;
          if (r > 0) {
            rawUp = Math.min(rawUp, ru);
            up = Math.min(up, u);
            rawDown = Math.min(rawDown, rd);
            down = Math.min(down, d);
          }
        }
        get(c.free(big));
        rates.put(size, new double[] {size / up, size / down});
        String toPlain = plain == null ? "" : String.format(", %.2f of plain", size / up / plain.get(size)[0]);
        String downToPlain = plain == null ? "" : String.format(", %.2f of plain", size / down / plain.get(size)[1]);
        System.out.printf("[figure] bulk %d MiB (%s, best of %d): raw TCP stream NetClient->NetServer up %.2f GB/s, down %.2f GB/s;"
            + " vertx-cuda side channel upload %.2f GB/s (%.2f of raw%s), download %.2f GB/s (%.2f of raw%s)%n",
          size >> 20, wire, rounds, size / rawUp / 1e9, size / rawDown / 1e9, size / up / 1e9, rawUp / up, toPlain,
          size / down / 1e9, rawDown / down, downToPlain);
      }
      get(vertx.close());
      return rates;
    } finally {
      node.destroyForcibly();
      node.waitFor(30, TimeUnit.SECONDS);
    }
  }

  private static String waitReady(Process node) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8));
    ArrayDeque<String> last = new ArrayDeque<>();
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
          } catch (IOException ignored) {
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

  /** Round trips of the small request before any is measured, and measured per repeat. */
  private static final int WARM_UP = 2000;
  private static final int ROUNDS = 5000;
  private static final int REPEATS = 3;

  private static long[] rounds(Supplier<Future<?>> call, int n) throws Exception {
    long[] ns = new long[n];
    for (int i = 0; i < ns.length; i++) {
      long t0 = System.nanoTime();
      get(call.get());
      ns[i] = System.nanoTime() - t0;
    }
    Arrays.sort(ns);
    return ns;
  }

  private static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }

  private static double min(double[] v) {
    return Arrays.stream(v).min().orElse(Double.NaN);
  }

  private static double max(double[] v) {
    return Arrays.stream(v).max().orElse(Double.NaN);
  }

  private static double at(long[] sorted, double q) {
    return sorted[(int) Math.min(sorted.length - 1, Math.round(q * (sorted.length - 1)))] / 1e3;
  }

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }
}
