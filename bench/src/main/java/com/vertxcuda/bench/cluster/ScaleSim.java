package com.vertxcuda.bench.cluster;

import com.hazelcast.core.EntryEvent;
import com.hazelcast.map.IMap;
import com.hazelcast.map.listener.EntryAddedListener;
import com.hazelcast.map.listener.EntryExpiredListener;
import com.hazelcast.map.listener.EntryRemovedListener;
import com.hazelcast.map.listener.EntryUpdatedListener;
import com.vertxcuda.Addresses;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.PlacementPolicy;
import com.vertxcuda.internal.CudaRuntime;
import com.vertxcuda.internal.VertxInternals;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.samples.QuietLogging;
import com.vertxcuda.samples.cluster.ClusterSettings;
import com.vertxcuda.samples.cluster.GpuNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.io.IOException;
import java.util.ArrayDeque;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The registry past one GPU node, simulated on one machine: this JVM joins as an observer, starts
 * {@code --nodes} GPU node JVMs with {@code --devices} simulated devices each (host backend, small
 * memory), and measures how long until every device is listed, the registry's traffic when idle
 * (map writes per second, counted by a Hazelcast entry listener; lifecycle events on the registry
 * address), what one entry weighs, what one placement costs, how a burst of choosers spreads, and
 * how long a node killed with {@code kill -9} stays listed and stays in the map. Prints one
 * {@code [figure]} line per measurement; docs/scale.md carries them to 100 nodes.
 *
 * <pre>java -cp ... com.vertxcuda.bench.cluster.ScaleSim --nodes 4 --devices 32 --choosers 1024</pre>
 */
@Command(name = "scale-sim", mixinStandardHelpOptions = true, description = "Measure the device registry with several node JVMs.")
public final class ScaleSim implements Callable<Integer> {

  @Mixin
  ClusterSettings cluster = new ClusterSettings();

  @Option(names = "--nodes", description = "GPU node JVMs (default ${DEFAULT-VALUE})")
  int nodes = 4;

  @Option(names = "--devices", description = "simulated devices per node (default ${DEFAULT-VALUE})")
  int devices = 32;

  @Option(names = "--choosers", description = "concurrent placements in the burst (default ${DEFAULT-VALUE})")
  int choosers = 1024;

  @Option(names = "--idle-seconds", description = "how long the idle traffic is counted (default ${DEFAULT-VALUE})")
  int idleSeconds = 30;

  @Option(names = "--node-heap", description = "-Xmx of each node JVM (default ${DEFAULT-VALUE})")
  String nodeHeap = "512m";

  private final AtomicLong mapWrites = new AtomicLong();
  private final AtomicLong mapExpired = new AtomicLong();
  private final AtomicLong mapRemoved = new AtomicLong();
  private final AtomicLong registryEvents = new AtomicLong();

  public static void main(String[] args) {
    QuietLogging.apply();
    System.exit(new CommandLine(new ScaleSim()).setCaseInsensitiveEnumValuesAllowed(true).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    int total = nodes * devices;
    Vertx vertx = get(cluster.start());
    countRegistryTraffic(vertx);
    System.out.printf("[figure] scale-sim: %d node JVMs x %d simulated devices = %d entries, %s, %d cores%n",
      nodes, devices, total, cluster.manager().name().toLowerCase(), Runtime.getRuntime().availableProcessors());
    List<Process> started = new ArrayList<>();
    try {
      long t0 = System.nanoTime();
      List<CompletableFuture<Long>> ready = new ArrayList<>();
      for (int i = 0; i < nodes; i++) {
        Process p = startNode();
        started.add(p);
        ready.add(readyAt(p));
      }
      long lastReady = 0;
      long firstReady = Long.MAX_VALUE;
      for (CompletableFuture<Long> r : ready) {
        long at = r.get(600, TimeUnit.SECONDS);
        lastReady = Math.max(lastReady, at);
        firstReady = Math.min(firstReady, at);
      }
      long allListed = waitListed(vertx, total, 600);
      System.out.printf("[figure] start: first node READY %.1f s, last READY %.1f s, all %d devices listed %.1f s after"
          + " launch (%.2f s after the last READY); %d registry map writes and %d registry events so far%n",
        s(firstReady - t0), s(lastReady - t0), total, s(allListed - t0), s(allListed - lastReady), mapWrites.get(),
        registryEvents.get());

      idleTraffic(total);
      entrySize(vertx, total);
      placementCost(vertx);
      burst(vertx, total);
      kill(vertx, started.get(0), total - devices);
    } finally {
      for (Process p : started) {
        p.destroyForcibly();
      }
      for (Process p : started) {
        p.waitFor(30, TimeUnit.SECONDS);
      }
      get(vertx.close());
    }
    return 0;
  }

  private Process startNode() throws Exception {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
      "-Xmx" + nodeHeap, "-XX:+UseSerialGC", "-Djava.net.preferIPv4Stack=true", "-cp", System.getProperty("java.class.path"),
      GpuNode.class.getName(), "--backend", "host", "--devices", "all", "--host-devices", String.valueOf(devices),
      "--device-option", "hostMemory=" + (16L << 20)));
    command.addAll(cluster.arguments());
    return new ProcessBuilder(command).redirectErrorStream(true).start();
  }

  /** When the node printed READY (System.nanoTime); its output is drained after that. */
  private static CompletableFuture<Long> readyAt(Process p) {
    CompletableFuture<Long> at = new CompletableFuture<>();
    Thread reader = new Thread(() -> {
      ArrayDeque<String> last = new ArrayDeque<>();
      try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = in.readLine()) != null; ) {
          if (line.startsWith("READY ")) {
            at.complete(System.nanoTime());
          }
          last.addLast(line);
          if (last.size() > 40) {
            last.removeFirst();
          }
        }
      } catch (IOException ignored) {
        // gone
      }
      at.completeExceptionally(new IllegalStateException("a node exited before READY:\n" + String.join("\n", last)));
    }, "scale-sim-node-output");
    reader.setDaemon(true);
    reader.start();
    return at;
  }

  // Every write to the registry map anywhere in the cluster, as Hazelcast tells a listener on it.
  private void countRegistryTraffic(Vertx vertx) {
    CudaRuntime.of(vertx).registerCodecs();
    vertx.eventBus().consumer(Addresses.REGISTRY_EVENTS, m -> registryEvents.incrementAndGet());
    if (!(VertxInternals.clusterManager(vertx) instanceof HazelcastClusterManager)) {
      System.out.println("[figure] map writes are counted on hazelcast only");
      return;
    }
    IMap<Object, Object> map = ((HazelcastClusterManager) VertxInternals.clusterManager(vertx)).getHazelcastInstance()
      .getMap(Addresses.REGISTRY_MAP);
    map.addEntryListener(new Counter(), false);
  }

  private final class Counter implements EntryAddedListener<Object, Object>, EntryUpdatedListener<Object, Object>,
    EntryRemovedListener<Object, Object>, EntryExpiredListener<Object, Object> {
    @Override public void entryAdded(EntryEvent<Object, Object> e) { mapWrites.incrementAndGet(); }
    @Override public void entryUpdated(EntryEvent<Object, Object> e) { mapWrites.incrementAndGet(); }
    @Override public void entryRemoved(EntryEvent<Object, Object> e) { mapRemoved.incrementAndGet(); }
    @Override public void entryExpired(EntryEvent<Object, Object> e) { mapExpired.incrementAndGet(); }
  }

  private void idleTraffic(int total) throws InterruptedException {
    long writes = mapWrites.get();
    long events = registryEvents.get();
    long t0 = System.nanoTime();
    Thread.sleep(idleSeconds * 1000L);
    double seconds = s(System.nanoTime() - t0);
    double perSecond = (mapWrites.get() - writes) / seconds;
    System.out.printf("[figure] idle %d s: %.1f registry map writes/s (%.3f per device per s), %d registry events%n",
      idleSeconds, perSecond, perSecond / total, registryEvents.get() - events);
  }

  private void entrySize(Vertx vertx, int total) throws Exception {
    List<DeviceInfo> listed = get(DeviceRegistry.list(vertx));
    int json = listed.get(0).toJson().encode().getBytes(StandardCharsets.UTF_8).length;
    String stored = "";
    if (VertxInternals.clusterManager(vertx) instanceof HazelcastClusterManager) {
      var stats = ((HazelcastClusterManager) VertxInternals.clusterManager(vertx)).getHazelcastInstance()
        .getMap(Addresses.REGISTRY_MAP).getLocalMapStats();
      if (stats.getOwnedEntryCount() > 0) {
        stored = String.format("; Hazelcast holds %d of them on this member at %d bytes each (key, value, record)",
          stats.getOwnedEntryCount(), stats.getOwnedEntryMemoryCost() / stats.getOwnedEntryCount());
      }
    }
    System.out.printf("[figure] an entry: %d bytes of JSON (%s)%s; the whole registry %.1f KiB of JSON%n", json,
      listed.get(0).getAddress(), stored, json * (double) total / 1024);
  }

  private static void placementCost(Vertx vertx) throws Exception {
    for (int i = 0; i < 20; i++) {
      get(DeviceRegistry.choose(vertx, PlacementPolicy.leastLoaded()));
    }
    long[] ns = new long[200];
    for (int i = 0; i < ns.length; i++) {
      long t0 = System.nanoTime();
      get(DeviceRegistry.choose(vertx, PlacementPolicy.leastLoaded()));
      ns[i] = System.nanoTime() - t0;
    }
    Arrays.sort(ns);
    System.out.printf("[figure] one placement (reads the whole map): p50 %.2f ms, p99 %.2f ms (200 sequential)%n",
      ns[100] / 1e6, ns[198] / 1e6);
  }

  private void burst(Vertx vertx, int total) throws Exception {
    long t0 = System.nanoTime();
    List<Future<DeviceInfo>> picks = new ArrayList<>();
    for (int i = 0; i < choosers; i++) {
      picks.add(DeviceRegistry.choose(vertx, PlacementPolicy.leastLoaded()));
    }
    get(Future.all(picks));
    double seconds = s(System.nanoTime() - t0);
    Map<String, Integer> perDevice = new TreeMap<>();
    Map<String, Integer> perNode = new TreeMap<>();
    for (Future<DeviceInfo> f : picks) {
      perDevice.merge(f.result().getAddress(), 1, Integer::sum);
      perNode.merge(f.result().getNode(), 1, Integer::sum);
    }
    int min = perDevice.size() < total ? 0 : perDevice.values().stream().min(Integer::compare).orElse(0);
    int max = perDevice.values().stream().max(Integer::compare).orElse(0);
    Map<Integer, Integer> histogram = new TreeMap<>();
    perDevice.values().forEach(n -> histogram.merge(n, 1, Integer::sum));
    if (perDevice.size() < total) {
      histogram.put(0, total - perDevice.size());
    }
    System.out.printf("[figure] burst of %d concurrent least-loaded placements in %.2f s: %d of %d devices chosen,"
        + " per device min %d max %d (ideal %.1f); devices by picks %s; per node %s%n", choosers, seconds,
      perDevice.size(), total, min, max, choosers / (double) total, histogram, perNode.values());
  }

  private void kill(Vertx vertx, Process victim, int remaining) throws Exception {
    long removedBefore = mapRemoved.get();
    long expiredBefore = mapExpired.get();
    long t0 = System.nanoTime();
    victim.destroyForcibly();
    long unlisted = 0;
    long gone = 0;
    while ((unlisted == 0 || gone == 0) && System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(120)) {
      if (unlisted == 0 && get(DeviceRegistry.list(vertx)).size() == remaining) {
        unlisted = System.nanoTime();
      }
      AsyncMap<String, Object> map = get(vertx.sharedData().getAsyncMap(Addresses.REGISTRY_MAP));
      if (gone == 0 && get(map.size()) == remaining) {
        gone = System.nanoTime();
      }
      Thread.sleep(20);
    }
    System.out.printf("[figure] kill -9 of a node with %d devices: unlisted (membership) after %.2f s, its entries"
        + " out of the map (TTL) after %.1f s (%d expired, %d removed)%n", devices, s(unlisted - t0), s(gone - t0),
      mapExpired.get() - expiredBefore, mapRemoved.get() - removedBefore);
  }

  private long waitListed(Vertx vertx, int total, int seconds) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (System.nanoTime() < deadline) {
      if (get(DeviceRegistry.list(vertx)).size() >= total) {
        return System.nanoTime();
      }
      Thread.sleep(50);
    }
    throw new IllegalStateException("not all " + total + " devices were listed after " + seconds + " s");
  }

  private static double s(long nanos) {
    return nanos / 1e9;
  }

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }
}
