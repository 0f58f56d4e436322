package com.vertxcuda.samples.cluster;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceNode;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.NodeOptions;
import com.vertxcuda.internal.CudaRuntime;
import com.vertxcuda.internal.Nodes;
import com.vertxcuda.internal.VertxInternals;
import com.vertxcuda.testing.LocalCluster;
import io.netty.handler.ssl.OpenSsl;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.JdkSSLEngineOptions;
import io.vertx.core.net.KeyStoreOptions;
import io.vertx.core.net.OpenSSLEngineOptions;
import io.vertx.core.net.PfxOptions;
import io.vertx.core.net.SSLEngineOptions;
import io.vertx.junit5.VertxExtension;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bulk side channel of a TLS event bus, on each TLS engine, in one cluster of this class: two GPU
 * nodes on the host backend, one whose bus names no engine (its side channel runs on OpenSSL, the
 * toolkit's choice where netty-tcnative loads, as it does on this module's test class path) and one
 * whose bus names the JDK's engine (kept), and two client nodes, one naming OpenSSL and one the JDK's.
 * Each bus's trust is a generic {@code KeyStoreOptions} (PKCS#12 stores made with keytool in a
 * temporary folder), which a JSON copy of the bus's options loses: transfers past 1 MiB take it with
 * the bus's key and trust and round-trip their bytes exactly on either engine, and across engines; a
 * node whose trust store holds another certificate is refused; a bus that names its key but no trust
 * fails the device's deploy, saying why.
 */
@ExtendWith(VertxExtension.class)
class SideChannelTlsTest {

  private static final String PASSWORD = "test-secret";

  private static final String CLUSTER = "vertx-cuda-tls-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
  @TempDir
  static Path dir;
  private static Path node;
  /** A GPU node whose bus names no TLS engine. */
  private static Vertx gpu;
  /** A GPU node whose bus names the JDK's engine. */
  private static Vertx gpuJdk;
  private static Vertx clientOpenSsl;
  private static Vertx clientJdk;

  @BeforeAll
  static void start() throws Exception {
    assertTrue(OpenSSLEngineOptions.isAvailable(), "netty-tcnative loads here: " + OpenSsl.unavailabilityCause());
    node = store(dir, "node");
    gpu = await(node(bus(key(node), trust(node), null)));
    await(DeviceNode.deploy(gpu, new NodeOptions().setDeviceOptions(new DeviceOptions().setBackend(BackendKind.HOST))));
    gpuJdk = await(node(bus(key(node), trust(node), new JdkSSLEngineOptions())));
    await(DeviceNode.deploy(gpuJdk, new NodeOptions().setDeviceOptions(new DeviceOptions().setBackend(BackendKind.HOST))));
    clientOpenSsl = await(node(bus(key(node), trust(node), new OpenSSLEngineOptions())));
    clientJdk = await(node(bus(key(node), trust(node), new JdkSSLEngineOptions())));
  }

  @AfterAll
  static void stop() throws Exception {
    await(LocalCluster.close(clientJdk, clientOpenSsl, gpuJdk, gpu));
  }

  /**
   * A bus that names no engine keeps naming none (Vert.x runs it on the JDK's) and its side channel
   * runs on OpenSSL; a client whose bus names OpenSSL streams 5 MiB each way to it, OpenSSL at both
   * ends, byte-equal.
   */
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void theSideChannelOfABusThatNamesNoEngineRunsOnOpenSsl() throws Exception {
    assertNull(VertxInternals.eventBusOptions(gpu).getSslEngineOptions(), "the bus's own options are left as given");
    assertEngine(OpenSSLEngineOptions.class, gpu);
    assertEngine(OpenSSLEngineOptions.class, clientOpenSsl);
    roundTrip(clientOpenSsl, gpu, (5 << 20) + 8, 1);
  }

  /**
   * A bus that names the JDK's engine keeps it, for itself and its side channel, although OpenSSL
   * loads: JDK at both ends, 5 MiB each way byte-equal.
   */
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aBusThatNamesTheJdkEngineKeepsItForTheSideChannel() throws Exception {
    assertInstanceOf(JdkSSLEngineOptions.class, VertxInternals.eventBusOptions(gpuJdk).getSslEngineOptions());
    assertEngine(JdkSSLEngineOptions.class, gpuJdk);
    assertEngine(JdkSSLEngineOptions.class, clientJdk);
    roundTrip(clientJdk, gpuJdk, (5 << 20) + 8, 2);
  }

  /** A JDK client and an OpenSSL node, and an OpenSSL client and a JDK node, speak the same TLS. */
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void theEnginesTalkToEachOther() throws Exception {
    roundTrip(clientJdk, gpu, (3 << 20) + 8, 3);
    roundTrip(clientOpenSsl, gpuJdk, (3 << 20) + 8, 4);
  }

  /**
   * A node whose trust store holds another certificate (its side channel on OpenSSL, the toolkit's
   * choice) is refused by the handshake, on the OpenSSL node and the JDK node alike (its bus requests
   * still pass, as Vert.x's own bus client runs them: see docs/security.md).
   */
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aNodeThatTrustsAnotherCertificateIsRefused() throws Exception {
    Path other = store(dir, "other");
    Vertx stranger = await(node(bus(key(other), trust(other), null)));
    try {
      assertEngine(OpenSSLEngineOptions.class, stranger);
      for (Vertx target : new Vertx[] {gpu, gpuJdk}) {
        DeviceClient owner = DeviceClient.create(clientJdk, new DeviceClientOptions().setNode(Nodes.self(target)).setDevice(0));
        BufferHandle h = await(owner.alloc(DType.U8, (2 << 20) + 8));
        DeviceClient wary = DeviceClient.create(stranger, new DeviceClientOptions().setNode(Nodes.self(target)).setDevice(0));
        BufferHandle small = await(wary.alloc(DType.U8, 16));
        await(wary.upload(small, Buffer.buffer(new byte[16])));
        ExecutionException refused = assertThrows(ExecutionException.class, () -> await(wary.download(h)));
        assertTrue(String.valueOf(refused.getCause().getMessage()).contains("cannot be reached"),
          String.valueOf(refused.getCause().getMessage()));
        await(wary.free(small));
        await(owner.free(h));
      }
    } finally {
      await(stranger.close());
    }
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aBusWithAKeyAndNoTrustFailsTheDeploy() throws Exception {
    Vertx keyOnly = await(node(bus(key(node), null, null)));
    try {
      ExecutionException failed = assertThrows(ExecutionException.class, () -> await(DeviceNode.deploy(keyOnly,
        new NodeOptions().setDeviceOptions(new DeviceOptions().setBackend(BackendKind.HOST)))));
      String message = String.valueOf(failed.getCause().getMessage());
      assertTrue(message.contains("TLS") && message.contains("trust"), message);
    } finally {
      await(keyOnly.close());
    }
  }

  /**
   * The samples' cluster settings run TLS on OpenSSL unless told the JDK's, and pass the choice to the
   * processes they start (the bench's GPU node).
   */
  @Test
  void clusterSettingsRunTlsOnOpenSslUnlessTheyNameAnotherEngine() {
    ClusterSettings settings = new ClusterSettings().setTls(node.toString(), PASSWORD);
    assertInstanceOf(OpenSSLEngineOptions.class, settings.sslEngine());
    settings.setTlsEngine(ClusterSettings.TlsEngine.JDK);
    assertInstanceOf(JdkSSLEngineOptions.class, settings.sslEngine());
    ClusterSettings parsed = new ClusterSettings();
    new CommandLine(parsed).setCaseInsensitiveEnumValuesAllowed(true).parseArgs(settings.arguments().toArray(String[]::new));
    assertInstanceOf(JdkSSLEngineOptions.class, parsed.sslEngine());
    assertInstanceOf(OpenSSLEngineOptions.class, parsed.setTlsEngine(ClusterSettings.TlsEngine.OPENSSL).sslEngine());
  }

  // The side channel's engine on node: its server's and its client's.
  private static void assertEngine(Class<? extends SSLEngineOptions> engine, Vertx node) {
    assertInstanceOf(engine, CudaRuntime.of(node).bulkTlsEngine());
  }

  // Uploads and downloads size bytes from client to gpu's device, over the side channel (past 1 MiB).
  private static void roundTrip(Vertx client, Vertx target, int size, long seed) throws Exception {
    long accepted = CudaRuntime.of(target).bulkConnectionsAccepted();
    DeviceClient remote = DeviceClient.create(client, new DeviceClientOptions().setNode(Nodes.self(target)).setDevice(0));
    Buffer data = ProcessCluster.pattern(size, seed);
    BufferHandle h = await(remote.alloc(DType.U8, data.length()));
    try {
      await(remote.upload(h, data));
      Buffer back = await(remote.download(h));
      assertEquals(data.length(), back.length());
      assertTrue(data.equals(back), size + " bytes came back byte-equal over the TLS side channel");
    } finally {
      await(remote.free(h));
    }
    assertTrue(CudaRuntime.of(target).bulkConnectionsAccepted() > accepted, "the transfers took the side channel");
  }

  /**
   * A TLS bus without client authentication, on {@code engine} (none: the bus names none). Vert.x
   * 5.0.7's clustered bus copies its own options through JSON, so its key must have a JSON form (a
   * generic {@code KeyStoreOptions} key stops it from starting); the trust here has none, and only
   * the side channel keeps it.
   */
  private static EventBusOptions bus(PfxOptions key, KeyStoreOptions trust, SSLEngineOptions engine) {
    EventBusOptions bus = new EventBusOptions().setHost("127.0.0.1").setClusterPublicHost("127.0.0.1").setPort(0);
    bus.setSsl(true).setKeyCertOptions(key).setTrustOptions(trust).setClientAuth(ClientAuth.NONE).setSslEngineOptions(engine);
    return bus;
  }

  private static PfxOptions key(Path store) {
    return new PfxOptions().setPath(store.toString()).setPassword(PASSWORD);
  }

  private static KeyStoreOptions trust(Path store) {
    return new KeyStoreOptions().setType("PKCS12").setPath(store.toString()).setPassword(PASSWORD);
  }

  private static Future<Vertx> node(EventBusOptions bus) {
    System.setProperty("hazelcast.phone.home.enabled", "false");
    return Vertx.builder().with(new VertxOptions().setEventBusOptions(bus))
      .withClusterManager(new HazelcastClusterManager(LocalCluster.hazelcastConfig(CLUSTER)))
      .buildClustered();
  }

  /** A PKCS#12 store with one self-signed key pair for 127.0.0.1, made with keytool. */
  private static Path store(Path dir, String name) throws Exception {
    Path store = dir.resolve(name + ".p12");
    Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
      "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-genkeypair", "-alias", "node", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
      "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2", "-storetype", "PKCS12",
      "-keystore", store.toString(), "-storepass", PASSWORD, "-keypass", PASSWORD)
      .redirectErrorStream(true).start();
    assertEquals(0, keytool.waitFor(), new String(keytool.getInputStream().readAllBytes()));
    return store;
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(90, TimeUnit.SECONDS);
  }
}
