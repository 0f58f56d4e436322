package com.vertxcuda.samples.cluster;

import com.vertxcuda.internal.VertxInternals;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.FailureCode;
import com.vertxcuda.PlacementPolicy;
import com.vertxcuda.internal.Nodes;
import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.DeviceStats;
import com.vertxcuda.message.FaultRequest;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.OpenSSLEngineOptions;
import io.vertx.core.spi.cluster.ClusterManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIf;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A GPU node and client nodes as separate JVMs on 127.0.0.1 (host backend): what happens when nodes
 * die, how placement spreads, and the event bus over TLS. Here on Hazelcast (TCP/IP join on
 * loopback); {@link InfinispanClusterProcessesTest} runs those that depend on the cluster manager on
 * encrypted Infinispan. Only the cluster manager SPI is used.
 */
class ClusterProcessesTest {

  private static final AtomicLong CLUSTERS = new AtomicLong();
  private final List<AutoCloseable> closing = new ArrayList<>();
  private final List<Vertx> nodes = new ArrayList<>();
  private final String clusterName = "vertx-cuda-it-" + ProcessHandle.current().pid() + "-" + CLUSTERS.incrementAndGet();
  final ClusterSettings settings = settings();

  /**
   * Why a scenario runs on Hazelcast only: what it checks (the side channel's bytes and connections,
   * the client artifact, the bus's TLS and codecs) runs the same whichever cluster manager holds the
   * membership. The Infinispan classes run the scenarios that depend on it: joins, leaves, the
   * subscriptions a first request waits for, registry events.
   */
  static final String SAME_ON_EVERY_CLUSTER_MANAGER =
    "the same on every cluster manager: the Hazelcast class runs it";

  /**
   * Why the Infinispan class cuts a download only: what depends on the cluster manager (the leave
   * that fails the cut transfer) is the same for either direction; the direction is the side
   * channel's, which the Hazelcast class runs both ways.
   */
  static final String ONE_DIRECTION_PER_CLUSTER_MANAGER =
    "the leave that ends a cut transfer is the same either way: the Infinispan class cuts a download";

  /** Whether this class runs on a cluster manager other than Hazelcast (its subclass on Infinispan). */
  boolean onAnotherClusterManager() {
    return false;
  }

  /** Settings of a member of this test's cluster (a new object each time). */
  ClusterSettings settings() {
    ClusterSettings s = new ClusterSettings();
    s.name = clusterName;
    return s;
  }

  @AfterEach
  void close() throws Exception {
    for (Vertx v : nodes) {
      await(v.close());
    }
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  private NodeProcess gpuNode(String... extra) throws Exception {
    List<String> args = new ArrayList<>(settings.arguments());
    args.addAll(List.of("--backend", "host"));
    args.addAll(List.of(extra));
    NodeProcess p = NodeProcess.start(GpuNode.class, args, "READY ");
    closing.add(p);
    return p;
  }

  Vertx join(ClusterSettings s) throws Exception {
    Vertx v = await(s.start());
    nodes.add(v);
    return v;
  }

  private static List<DeviceInfo> devicesOf(Vertx v, String node, int count) throws Exception {
    long deadline = System.currentTimeMillis() + 60_000;
    while (true) {
      List<DeviceInfo> ready = new ArrayList<>();
      for (DeviceInfo d : await(DeviceRegistry.list(v))) {
        if (d.getNode().equals(node)) {
          ready.add(d);
        }
      }
      if (ready.size() >= count) {
        return ready;
      }
      if (System.currentTimeMillis() > deadline) {
        fail("node " + node + " registered " + ready.size() + " of " + count + " devices");
      }
      Thread.sleep(100);
    }
  }

  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  @Tag("alone")
  void requestsInFlightToAKilledNodeFailWithinASecondOfTheLeave() throws Exception {
    NodeProcess gpu = gpuNode("--device-option", "faultInjection=true", "--device-option", "heartbeatTimeout=120000");
    Vertx client = join(settings);
    String gpuId = gpu.ready(90);
    DeviceInfo device = devicesOf(client, gpuId, 1).get(0);
    DeviceClient c = DeviceClient.create(client, device);
    BufferHandle h = await(c.alloc(DType.F32, 1024));

    // When the cluster manager's member list loses the node (its node listener is Vert.x's own).
    AtomicLong leftAt = new AtomicLong();
    ClusterManager members = VertxInternals.clusterManager(client);
    Thread leaveWatch = new Thread(() -> {
      while (leftAt.get() == 0 && !Thread.currentThread().isInterrupted()) {
        if (!members.getNodes().contains(gpuId)) {
          leftAt.set(System.nanoTime());
        }
        java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
      }
    }, "leave-watch");
    leaveWatch.setDaemon(true);
    leaveWatch.start();
    closing.add(leaveWatch::interrupt);
    List<DeviceEvent> watched = new CopyOnWriteArrayList<>();
    DeviceRegistry.watch(client, watched::add);
    List<DeviceEvent> deviceEvents = new CopyOnWriteArrayList<>();
    c.events(deviceEvents::add);

    // The submission thread stalls; 32 requests wait behind it, in flight.
    new RequestSender(client, c.address(), 60_000).request(new FaultRequest(FaultRequest.Kind.STALL));
    List<Future<?>> inFlight = new ArrayList<>();
    long[] failedAt = new long[32];
    for (int i = 0; i < 32; i++) {
      int k = i;
      inFlight.add(c.fill(h, i).onFailure(t -> failedAt[k] = System.nanoTime()));
    }
    Thread.sleep(500);
    assertTrue(inFlight.stream().noneMatch(Future::isComplete), "the requests are in flight");
    gpu.kill();
    await(Future.join(inFlight).otherwiseEmpty(), 20);
    // The member list may show the leave a moment after the node listener heard it (Infinispan
    // updates its node list from a replicated cache): wait for it, bounded, before measuring against it.
    for (long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10); leftAt.get() == 0 && System.nanoTime() < until; ) {
      Thread.sleep(10);
    }

    assertTrue(leftAt.get() != 0, "the cluster saw the node leave");
    long worst = 0;
    for (int i = 0; i < 32; i++) {
      Future<?> f = inFlight.get(i);
      assertTrue(f.failed(), "request " + i + " failed");
      assertEquals(FailureCode.CONTEXT_LOST, ((CudaException) f.cause()).code(), f.cause().getMessage());
      worst = Math.max(worst, failedAt[i] - leftAt.get());
    }
    assertTrue(worst <= TimeUnit.SECONDS.toNanos(1), "failed " + worst / 1_000_000 + " ms after the leave was seen");

    // The departed device is never listed or chosen again, and watchers heard it was lost.
    assertTrue(await(DeviceRegistry.list(client)).stream().noneMatch(d -> d.getNode().equals(gpuId)));
    CudaException none = awaitFailure(DeviceRegistry.leastLoaded(client));
    assertEquals(FailureCode.CONTEXT_LOST, none.code());
    assertTrue(watched.stream().anyMatch(e -> e.getType() == DeviceEvent.Type.LOST && e.getNode().equals(gpuId)), watched.toString());
    assertTrue(deviceEvents.stream().anyMatch(e -> e.getType() == DeviceEvent.Type.LOST), deviceEvents.toString());
    // Later requests fail at once, not after a timeout.
    long t0 = System.nanoTime();
    assertEquals(FailureCode.CONTEXT_LOST, awaitFailure(c.stats()).code());
    assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(1));
  }

  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void aKilledClientsBuffersAreFreed() throws Exception {
    NodeProcess gpu = gpuNode();
    Vertx observer = join(settings);
    String gpuId = gpu.ready(90);
    DeviceInfo device = devicesOf(observer, gpuId, 1).get(0);
    DeviceClient c = DeviceClient.create(observer, device);
    BufferHandle mine = await(c.alloc(DType.U8, 4096));
    DeviceStats baseline = await(c.stats());

    List<String> args = new ArrayList<>(settings.arguments());
    args.addAll(List.of("--hold", String.valueOf(64L << 20)));
    NodeProcess client = NodeProcess.startSender(ClusterClient.class, args, "HELD ");
    closing.add(client);
    String clientId = client.ready(90);
    DeviceStats held = await(c.stats());
    assertEquals(64L << 20, held.getOwnerBytes().get(clientId), held.getOwnerBytes().toString());
    assertEquals(baseline.getBytesAllocated() + (64L << 20), held.getBytesAllocated());

    client.kill();
    long t0 = System.nanoTime();
    DeviceStats after = await(c.stats());
    while (after.getBytesAllocated() != baseline.getBytesAllocated() && System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(10)) {
      Thread.sleep(50);
      after = await(c.stats());
    }
    assertEquals(baseline.getBytesAllocated(), after.getBytesAllocated(), "the departed client's 64 MiB were freed");
    assertEquals(baseline.getBuffersAllocated(), after.getBuffersAllocated());
    assertFalse(after.getOwnerBytes().containsKey(clientId));
    assertEquals(4096L, after.getOwnerBytes().get(Nodes.self(observer)), "this node's buffer stays");
    System.out.printf("[figure] cluster: a killed client's 64 MiB freed %d ms after kill -9%n",
      (System.nanoTime() - t0) / 1_000_000);
    await(c.free(mine));
  }

  @DisabledIf(value = "onAnotherClusterManager", disabledReason = SAME_ON_EVERY_CLUSTER_MANAGER)
  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void aSendingNodeWithOnlyTheClientArtifactMultipliesOnARemoteDevice() throws Exception {
    NodeProcess gpu = gpuNode();
    gpu.ready(90);
    String classPath = NodeProcess.senderClassPath();
    assertTrue(classPath.matches("(?s).*(client/target/classes|vertx-cuda-client-[0-9][^/]*\\.jar).*"), classPath);
    for (String entry : classPath.split(java.io.File.pathSeparator)) {
      assertFalse(entry.matches(".*(device-verticle|library-verticles)/target/.*|.*/(vertx-cuda-device|vertx-cuda-libraries"
        + "|jcuda|jcublas|jcufft|jcurand|JTransforms)-[0-9][^/]*\\.jar"), "the sender's class path holds " + entry);
    }
    List<String> args = new ArrayList<>(settings.arguments());
    args.addAll(List.of("--n", "64"));
    NodeProcess client = NodeProcess.startSender(ClusterClient.class, args, "using ");
    closing.add(client);
    client.ready(90);
    assertEquals(0, client.exitValue(120), client.output());
    assertTrue(client.output().contains("SGEMM on ") && client.output().contains(": OK"), client.output());
  }

  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void aBurstOfChoosersSpreadsOverTwoDevices() throws Exception {
    NodeProcess gpu = gpuNode("--devices", "2");
    Vertx client = join(settings);
    String gpuId = gpu.ready(90);
    devicesOf(client, gpuId, 2);
    List<Future<DeviceClient>> chosen = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      chosen.add(DeviceClient.create(client, PlacementPolicy.leastLoaded()));
    }
    await(Future.all(chosen));
    Map<String, Integer> count = new HashMap<>();
    chosen.forEach(f -> count.merge(f.result().address(), 1, Integer::sum));
    assertEquals(2, count.size(), count.toString());
    count.values().forEach(n -> assertTrue(n >= 40 && n <= 60, "spread " + count));
    // Round robin alternates; every chosen client works.
    List<Future<DeviceClient>> turns = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      turns.add(DeviceClient.create(client, PlacementPolicy.roundRobin()));
    }
    await(Future.all(turns));
    Map<String, Integer> rr = new HashMap<>();
    turns.forEach(f -> rr.merge(f.result().address(), 1, Integer::sum));
    assertEquals(2, rr.size(), rr.toString());
    assertTrue(rr.values().stream().allMatch(n -> n == 5), "turns alternate: " + rr);
    for (String address : rr.keySet()) {
      DeviceClient d = turns.stream().map(Future::result).filter(x -> x.address().equals(address)).findFirst().orElseThrow();
      BufferHandle h = await(d.alloc(DType.F32, 4));
      await(d.fill(h, 2.5));
      assertEquals(2.5f, await(d.download(h)).getFloatLE(12));
      await(d.free(h));
    }
  }

  @DisabledIf(value = "onAnotherClusterManager", disabledReason = SAME_ON_EVERY_CLUSTER_MANAGER)
  @Test
  @Timeout(value = 240, unit = TimeUnit.SECONDS)
  void aGibibyteFromARemoteNodeArrivesByteEqualOverTheSideChannel() throws Exception {
    NodeProcess gpu = gpuNode("--device-option", "hostMemory=" + (3L << 30));
    Vertx client = join(settings);
    String gpuId = gpu.ready(90);
    DeviceClient c = DeviceClient.create(client, devicesOf(client, gpuId, 1).get(0));
    int size = 1 << 30;
    Buffer data = Buffer.buffer(size);
    long seed = 0x9E3779B97F4A7C15L;
    for (int i = 0; i < size; i += 8) {
      seed ^= seed << 13;
      seed ^= seed >>> 7;
      seed ^= seed << 17;
      data.appendLong(seed);
    }
    BufferHandle h = await(c.alloc(DType.U8, size), 120);
    long t0 = System.nanoTime();
    // Sent one after the other without waiting (the caller's order): the upload's stream, then a
    // fill of the last 8 bytes, then the download, which reads both.
    Future<BufferHandle> up = c.upload(h, data);
    Future<BufferHandle> fill = c.fill(h.view(size - 8, 8), 7);
    Future<Buffer> down = c.download(h);
    await(up, 120);
    await(fill, 120);
    Buffer back = await(down, 120);
    double seconds = (System.nanoTime() - t0) / 1e9;
    assertEquals(size, back.length());
    for (int i = size - 8; i < size; i++) {
      data.setByte(i, (byte) 7);
    }
    assertTrue(data.equals(back), "1 GiB came back byte-equal");
    System.out.printf("[figure] cluster: 1 GiB up and down through a remote node on loopback in %.1f s%n", seconds);
    await(c.free(h));
  }

  /** Bytes that differ from one position to the next (xorshift), so a misplaced piece shows. */
  static Buffer pattern(int size, long seed) {
    Buffer data = Buffer.buffer(size);
    for (int i = 0; i < size; i += 8) {
      seed ^= seed << 13;
      seed ^= seed >>> 7;
      seed ^= seed << 17;
      data.appendLong(seed);
    }
    return data;
  }

  /**
   * 64 MiB go up and come back byte-equal over the node's bulk side channel (advertised in the
   * device's description), and an upload, a fill and a download made without waiting land in that
   * order; a float array whose values straddle the stream's pieces comes back equal too.
   */
  @DisabledIf(value = "onAnotherClusterManager", disabledReason = SAME_ON_EVERY_CLUSTER_MANAGER)
  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void sixtyFourMebibytesRoundTripOverTheSideChannelInOrder() throws Exception {
    NodeProcess gpu = gpuNode();
    Vertx client = join(settings);
    String gpuId = gpu.ready(90);
    DeviceClient c = DeviceClient.create(client, devicesOf(client, gpuId, 1).get(0));
    DeviceInfo described = await(c.describe());
    assertTrue(described.getBulkAddress() != null && described.getBulkAddress().startsWith("127.0.0.1:"),
      "the side channel is advertised: " + described.getBulkAddress());
    int size = 64 << 20;
    Buffer data = pattern(size, 0x9E3779B97F4A7C15L);
    BufferHandle h = await(c.alloc(DType.U8, size));
    Future<BufferHandle> up = c.upload(h, data);
    Future<BufferHandle> fill = c.fill(h.view(size - 8, 8), 7);
    Future<Buffer> down = c.download(h);
    await(up);
    await(fill);
    Buffer back = await(down);
    for (int i = size - 8; i < size; i++) {
      data.setByte(i, (byte) 7);
    }
    assertEquals(size, back.length());
    assertTrue(data.equals(back), "64 MiB came back byte-equal, the fill after the upload");
    // An array, read back through the side channel into a new float[].
    float[] values = new float[(3 << 20) + 5];
    for (int i = 0; i < values.length; i++) {
      values[i] = i * 0.5f - 7;
    }
    BufferHandle f = await(c.alloc(DType.F32, values.length));
    await(c.upload(f, values));
    float[] read = await(c.downloadFloats(f));
    assertTrue(java.util.Arrays.equals(values, read), "the float[] came back equal");
    await(c.free(f));
    await(c.free(h));
  }

  /**
   * A transfer naming a buffer with a forged token is refused FORBIDDEN, once, both ways; the device
   * goes on serving the real handle.
   */
  @DisabledIf(value = "onAnotherClusterManager", disabledReason = SAME_ON_EVERY_CLUSTER_MANAGER)
  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void aForgedTokenOnTheSideChannelIsForbiddenAndTheDeviceServesOn() throws Exception {
    NodeProcess gpu = gpuNode();
    Vertx client = join(settings);
    String gpuId = gpu.ready(90);
    DeviceClient c = DeviceClient.create(client, devicesOf(client, gpuId, 1).get(0));
    int size = 24 << 20;
    BufferHandle h = await(c.alloc(DType.U8, size));
    BufferHandle forged = new BufferHandle(h.node(), h.device(), h.generation(), h.id(), h.dtype(), h.count(),
      h.tokenHigh() ^ 1, h.tokenLow(), h.offset(), h.length());
    Buffer data = pattern(size, 42);
    java.util.concurrent.atomic.AtomicInteger answers = new java.util.concurrent.atomic.AtomicInteger();
    Future<BufferHandle> up = c.upload(forged, data).onComplete(ar -> answers.incrementAndGet());
    CudaException refused = awaitFailure(up);
    assertEquals(FailureCode.FORBIDDEN, refused.code(), refused.getMessage());
    CudaException refusedDown = awaitFailure(c.download(forged));
    assertEquals(FailureCode.FORBIDDEN, refusedDown.code(), refusedDown.getMessage());
    await(c.upload(h, data));
    assertTrue(data.equals(await(c.download(h))), "the device serves the real handle");
    assertEquals(1, answers.get(), "the forged upload was answered once");
    await(c.free(h));
  }

  /**
   * A remote upload cut by its node's death (kill -9 while its bytes stream over the side channel, on
   * a connection the client kept from an earlier transfer) fails once, CONTEXT_LOST, within a second of
   * the cluster seeing the node leave — not at its deadline; a transfer made after the leave fails at once.
   */
  @DisabledIf(value = "onAnotherClusterManager", disabledReason = ONE_DIRECTION_PER_CLUSTER_MANAGER)
  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  @Tag("alone")
  void aRemoteUploadCutByItsNodesDeathFailsWithinASecondOfTheLeave() throws Exception {
    cutByItsNodesDeath(true);
  }

  /** The same for a download. */
  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  @Tag("alone")
  void aRemoteDownloadCutByItsNodesDeathFailsWithinASecondOfTheLeave() throws Exception {
    cutByItsNodesDeath(false);
  }

  private void cutByItsNodesDeath(boolean upload) throws Exception {
    NodeProcess gpu = gpuNode("--device-option", "hostMemory=" + (2L << 30));
    Vertx client = join(settings);
    String gpuId = gpu.ready(90);
    DeviceClient c = DeviceClient.create(client, devicesOf(client, gpuId, 1).get(0));
    int size = 768 << 20;
    BufferHandle h = await(c.alloc(DType.U8, size), 120);
    // A transfer before it, whose connection the client keeps and the cut transfer takes.
    Buffer small = pattern(4 << 20, 5);
    BufferHandle w = await(c.alloc(DType.U8, small.length()));
    await(c.upload(w, small));
    assertTrue(small.equals(await(c.download(w))));
    AtomicLong leftAt = new AtomicLong();
    AtomicLong failedAt = new AtomicLong();
    java.util.concurrent.atomic.AtomicInteger answers = new java.util.concurrent.atomic.AtomicInteger();
    ClusterManager members = VertxInternals.clusterManager(client);
    Future<?> transfer = (upload ? c.upload(h, Buffer.buffer(new byte[size])) : c.download(h))
      .onComplete(ar -> answers.incrementAndGet())
      .onFailure(t -> failedAt.compareAndSet(0, System.nanoTime()));
    Thread.sleep(300);
    assertFalse(transfer.isComplete(), "the transfer is still on its way when the node dies");
    gpu.kill();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (members.getNodes().contains(gpuId) && System.nanoTime() < deadline) {
      java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
    }
    leftAt.set(System.nanoTime());
    CudaException lost = awaitFailure(transfer);
    assertEquals(FailureCode.CONTEXT_LOST, lost.code(), lost.getMessage());
    long after = failedAt.get() - leftAt.get();
    assertTrue(after <= TimeUnit.SECONDS.toNanos(1), "failed " + after / 1_000_000 + " ms after the leave was seen");
    Thread.sleep(200);
    assertEquals(1, answers.get(), "answered once");
    long t0 = System.nanoTime();
    CudaException later = awaitFailure(upload ? c.upload(w, small) : c.download(w));
    assertEquals(FailureCode.CONTEXT_LOST, later.code(), later.getMessage());
    assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(1), "a transfer after the leave fails at once");
  }

  @DisabledIf(value = "onAnotherClusterManager", disabledReason = SAME_ON_EVERY_CLUSTER_MANAGER)
  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void withTlsTheCodecsWorkAndAPlainNodeIsRefusedLoudly(@TempDir Path dir) throws Exception {
    Path store = dir.resolve("node.p12");
    Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
      "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-genkeypair", "-alias", "node", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
      "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2", "-storetype", "PKCS12",
      "-keystore", store.toString(), "-storepass", "test-secret", "-keypass", "test-secret")
      .redirectErrorStream(true).start();
    assertEquals(0, keytool.waitFor(), new String(keytool.getInputStream().readAllBytes()));
    settings.keyStore = store.toString();
    settings.password = "test-secret";
    NodeProcess gpu = gpuNode();
    Vertx tlsClient = join(settings);
    // The samples' settings put the bus on OpenSSL where netty-tcnative loads, as on this class path.
    assertTrue(VertxInternals.eventBusOptions(tlsClient).getSslEngineOptions() instanceof OpenSSLEngineOptions);
    String gpuId = gpu.ready(90);
    DeviceClient c = DeviceClient.create(tlsClient, devicesOf(tlsClient, gpuId, 1).get(0));
    BufferHandle h = await(c.alloc(DType.F32, 3));
    Buffer values = Buffer.buffer().appendFloatLE(1).appendFloatLE(-2).appendFloatLE(3.5f);
    await(c.upload(h, values));
    assertEquals(values, await(c.download(h)));
    // Past 1 MiB, over the side channel, which takes the bus's TLS settings.
    Buffer big = pattern(16 << 20, 7);
    BufferHandle b = await(c.alloc(DType.U8, big.length()));
    await(c.upload(b, big));
    assertTrue(big.equals(await(c.download(b))), "16 MiB came back byte-equal over TLS");
    // A plain connection to the side channel gets no bytes of the buffer: the channel speaks only TLS.
    String bulk = await(c.describe()).getBulkAddress();
    int colon = bulk.lastIndexOf(':');
    io.vertx.core.net.NetSocket plainSocket = await(tlsClient.createNetClient()
      .connect(Integer.parseInt(bulk.substring(colon + 1)), bulk.substring(0, colon)));
    Buffer heard = Buffer.buffer();
    io.vertx.core.Promise<Void> cut = io.vertx.core.Promise.promise();
    plainSocket.handler(heard::appendBuffer);
    plainSocket.closeHandler(v -> cut.tryComplete());
    plainSocket.write(Buffer.buffer().appendInt(0x56434232).appendByte((byte) 'D').appendLong(30_000).appendInt(64)
      .appendBuffer(Buffer.buffer(new byte[64])));
    await(cut.future(), 20);
    assertTrue(heard.length() < 64, "a plain peer heard " + heard.length() + " bytes");
    await(c.free(b));

    ClusterSettings plain = settings();
    Vertx plainNode = join(plain);
    CudaException listed = awaitFailure(DeviceRegistry.list(plainNode));
    assertEquals(FailureCode.FORBIDDEN, listed.code());
    assertTrue(listed.getMessage().contains("TLS"), listed.getMessage());
    long t0 = System.nanoTime();
    CudaException refused = awaitFailure(DeviceClient.create(plainNode,
      new com.vertxcuda.DeviceClientOptions().setNode(gpuId)).stats());
    assertEquals(FailureCode.FORBIDDEN, refused.code(), refused.getMessage());
    assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "refused at once, not after a timeout");
    await(c.free(h));
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aNodeStoppedWithSigtermLeavesAndExits() throws Exception {
    NodeProcess gpu = gpuNode();
    Vertx client = join(settings);
    String gpuId = gpu.ready(90);
    devicesOf(client, gpuId, 1);
    assertTrue(gpu.stop(30), "the node exited within 30 s of SIGTERM:\n" + gpu.output());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (VertxInternals.clusterManager(client).getNodes().contains(gpuId) && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertFalse(VertxInternals.clusterManager(client).getNodes().contains(gpuId), "it left the cluster");
    assertTrue(await(DeviceRegistry.list(client)).stream().noneMatch(d -> d.getNode().equals(gpuId)));
  }

  static <T> T await(Future<T> f) throws Exception {
    return await(f, 60);
  }

  static <T> T await(Future<T> f, long seconds) throws Exception {
    try {
      return f.toCompletionStage().toCompletableFuture().get(seconds, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
    }
  }

  static CudaException awaitFailure(Future<?> f) throws Exception {
    try {
      f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      return (CudaException) e.getCause();
    }
    throw new AssertionError("expected a failure");
  }
}
