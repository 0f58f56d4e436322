package com.vertxcuda.samples.cluster;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.FailureCode;
import com.vertxcuda.internal.VertxInternals;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.OpenSSLEngineOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A GPU node in a JVM of its own on 127.0.0.1 (host backend) reached from client nodes: the side
 * channel's bytes and order, a forged token, a sending node with only the client artifact, and the
 * event bus and side channel over TLS. What it checks runs the same whichever cluster manager holds
 * the membership: on Hazelcast only ({@link ClusterProcessesTest} and its Infinispan subclass run
 * what depends on the cluster manager). The scenarios on a plain bus share one GPU node, started once
 * for the class: each joins a client node of its own and frees what it allocated; the TLS scenario
 * starts its own.
 */
class SideChannelProcessesTest extends ProcessCluster {

  /** The cluster of the shared GPU node. */
  private static final String SHARED_CLUSTER = "vertx-cuda-it-" + ProcessHandle.current().pid() + "-side-channel";
  /** The shared GPU node: room for the gibibyte scenario's buffer. */
  private static NodeProcess sharedNode;

  /** Settings of a member of the shared GPU node's cluster (a new object each time). */
  static ClusterSettings shared() {
    ClusterSettings s = new ClusterSettings();
    s.name = SHARED_CLUSTER;
    return s;
  }

  @BeforeAll
  static void startTheGpuNode() throws Exception {
    sharedNode = NodeProcess.start(GpuNode.class, gpuNodeArguments(shared(), "--device-option", "hostMemory=" + (3L << 30)),
      "READY ");
  }

  @AfterAll
  static void stopTheGpuNode() throws Exception {
    if (sharedNode != null) {
      sharedNode.close();
    }
  }

  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void aSendingNodeWithOnlyTheClientArtifactMultipliesOnARemoteDevice() throws Exception {
    sharedNode.ready(90);
    String classPath = NodeProcess.senderClassPath();
    assertTrue(classPath.matches("(?s).*(client/target/classes|vertx-cuda-client-[0-9][^/]*\\.jar).*"), classPath);
    for (String entry : classPath.split(java.io.File.pathSeparator)) {
      assertFalse(entry.matches(".*(device-verticle|library-verticles)/target/.*|.*/(vertx-cuda-device|vertx-cuda-libraries"
        + "|jcuda|jcublas|jcufft|jcurand|JTransforms)-[0-9][^/]*\\.jar"), "the sender's class path holds " + entry);
    }
    List<String> args = new ArrayList<>(shared().arguments());
    args.addAll(List.of("--n", "64"));
    NodeProcess client = NodeProcess.startSender(ClusterClient.class, args, "using ");
    closing.add(client);
    client.ready(90);
    assertEquals(0, client.exitValue(120), client.output());
    assertTrue(client.output().contains("SGEMM on ") && client.output().contains(": OK"), client.output());
  }

  @Test
  @Timeout(value = 240, unit = TimeUnit.SECONDS)
  void aGibibyteFromARemoteNodeArrivesByteEqualOverTheSideChannel() throws Exception {
    DeviceClient c = clientOfTheSharedNode();
    int size = 1 << 30;
    Buffer data = pattern(size, 0x9E3779B97F4A7C15L);
    BufferHandle h = await(c.alloc(DType.U8, size), 120);
    long t0 = System.nanoTime();
    upFillDownInOrder(c, h, data, "1 GiB");
    double seconds = (System.nanoTime() - t0) / 1e9;
    System.out.printf("[figure] cluster: 1 GiB up and down through a remote node on loopback in %.1f s%n", seconds);
    await(c.free(h));
  }

  /**
   * 64 MiB go up and come back byte-equal over the node's bulk side channel (advertised in the
   * device's description), and an upload, a fill and a download made without waiting land in that
   * order; a float array whose values straddle the stream's pieces comes back equal too.
   */
  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void sixtyFourMebibytesRoundTripOverTheSideChannelInOrder() throws Exception {
    DeviceClient c = clientOfTheSharedNode();
    DeviceInfo described = await(c.describe());
    assertTrue(described.getBulkAddress() != null && described.getBulkAddress().startsWith("127.0.0.1:"),
      "the side channel is advertised: " + described.getBulkAddress());
    int size = 64 << 20;
    Buffer data = pattern(size, 0x9E3779B97F4A7C15L);
    BufferHandle h = await(c.alloc(DType.U8, size));
    upFillDownInOrder(c, h, data, "64 MiB");
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

  /** A client node of its own joins the shared GPU node's cluster: a client of that node's device. */
  private DeviceClient clientOfTheSharedNode() throws Exception {
    Vertx client = join(shared());
    String gpuId = sharedNode.ready(90);
    return DeviceClient.create(client, devicesOf(client, gpuId, 1).get(0));
  }

  /**
   * Sends, one after the other without waiting (the caller's order), the upload of {@code data} into
   * {@code h}, a fill of its last 8 bytes with 7 and the download of {@code h}, which must read both:
   * the bytes come back equal to {@code data} with the fill after the upload.
   */
  private static void upFillDownInOrder(DeviceClient c, BufferHandle h, Buffer data, String what) throws Exception {
    int size = data.length();
    Future<BufferHandle> up = c.upload(h, data);
    Future<BufferHandle> fill = c.fill(h.view(size - 8, 8), 7);
    Future<Buffer> down = c.download(h);
    await(up, 120);
    await(fill, 120);
    Buffer back = await(down, 120);
    assertEquals(size, back.length());
    for (int i = size - 8; i < size; i++) {
      data.setByte(i, (byte) 7);
    }
    assertTrue(sameBytes(data, back), what + " came back byte-equal, the fill after the upload");
  }

  /**
   * A transfer naming a buffer with a forged token is refused FORBIDDEN, once, both ways; the device
   * goes on serving the real handle.
   */
  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void aForgedTokenOnTheSideChannelIsForbiddenAndTheDeviceServesOn() throws Exception {
    DeviceClient c = clientOfTheSharedNode();
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
    assertTrue(sameBytes(data, await(c.download(h))), "the device serves the real handle");
    assertEquals(1, answers.get(), "the forged upload was answered once");
    await(c.free(h));
  }

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
    assertTrue(sameBytes(big, await(c.download(b))), "16 MiB came back byte-equal over TLS");
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
}
