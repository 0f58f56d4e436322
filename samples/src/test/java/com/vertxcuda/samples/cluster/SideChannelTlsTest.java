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
import com.vertxcuda.testing.LocalCluster;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.KeyStoreOptions;
import io.vertx.core.net.PfxOptions;
import io.vertx.junit5.VertxExtension;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bulk side channel of a TLS event bus whose trust is a generic {@code KeyStoreOptions} (PKCS#12
 * stores made with keytool in a temporary folder), which a JSON copy of the bus's options loses:
 * transfers past 1 MiB take it with the bus's key and trust; a bus that names its key but no trust
 * fails the device's deploy, saying why.
 */
@ExtendWith(VertxExtension.class)
class SideChannelTlsTest {

  private static final String PASSWORD = "test-secret";

  private final String clusterName = "vertx-cuda-tls-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
  private Vertx gpu;
  private Vertx client;
  private Vertx stranger;

  @AfterEach
  void close() throws Exception {
    await(LocalCluster.close(stranger, client, gpu));
  }

  /**
   * The GPU node's key, and each client node's trust as a generic {@code KeyStoreOptions}: a client
   * that trusts the node's certificate streams 5 MiB each way over the TLS side channel; one whose
   * trust store holds another certificate is refused by the handshake (its bus requests still pass,
   * as Vert.x's own bus client runs them: see docs/security.md).
   */
  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void aBusWithKeyStoreTrustRunsTheSideChannelOverTlsAndTrustsNoOtherServer(@TempDir Path dir) throws Exception {
    Path node = store(dir, "node");
    Path other = store(dir, "other");
    gpu = await(node(bus(key(node), trust(node))));
    await(DeviceNode.deploy(gpu, new NodeOptions().setDeviceOptions(new DeviceOptions().setBackend(BackendKind.HOST))));
    client = await(node(bus(key(node), trust(node))));
    DeviceClient remote = DeviceClient.create(client, new DeviceClientOptions().setNode(Nodes.self(gpu)).setDevice(0));
    Buffer data = ClusterProcessesTest.pattern((5 << 20) + 8, 2);
    BufferHandle h = await(remote.alloc(DType.U8, data.length()));
    await(remote.upload(h, data));
    assertTrue(data.equals(await(remote.download(h))), "5 MiB came back byte-equal over the TLS side channel");
    assertTrue(CudaRuntime.of(gpu).bulkConnectionsAccepted() >= 1, "the transfers took the side channel");

    stranger = await(node(bus(key(other), trust(other))));
    DeviceClient wary = DeviceClient.create(stranger, new DeviceClientOptions().setNode(Nodes.self(gpu)).setDevice(0));
    BufferHandle small = await(wary.alloc(DType.U8, 16));
    await(wary.upload(small, Buffer.buffer(new byte[16])));
    ExecutionException refused = assertThrows(ExecutionException.class, () -> await(wary.download(h)));
    assertTrue(String.valueOf(refused.getCause().getMessage()).contains("cannot be reached"),
      String.valueOf(refused.getCause().getMessage()));
    await(remote.free(h));
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aBusWithAKeyAndNoTrustFailsTheDeploy(@TempDir Path dir) throws Exception {
    gpu = await(node(bus(key(store(dir, "node")), null)));
    ExecutionException failed = assertThrows(ExecutionException.class, () -> await(DeviceNode.deploy(gpu,
      new NodeOptions().setDeviceOptions(new DeviceOptions().setBackend(BackendKind.HOST)))));
    String message = String.valueOf(failed.getCause().getMessage());
    assertTrue(message.contains("TLS") && message.contains("trust"), message);
  }

  /**
   * A TLS bus without client authentication. Vert.x 5.0.7's clustered bus copies its own options
   * through JSON, so its key must have a JSON form (a generic {@code KeyStoreOptions} key stops it from
   * starting); the trust here has none, and only the side channel keeps it.
   */
  private static EventBusOptions bus(PfxOptions key, KeyStoreOptions trust) {
    EventBusOptions bus = new EventBusOptions().setHost("127.0.0.1").setClusterPublicHost("127.0.0.1").setPort(0);
    bus.setSsl(true).setKeyCertOptions(key).setTrustOptions(trust).setClientAuth(ClientAuth.NONE);
    return bus;
  }

  private static PfxOptions key(Path store) {
    return new PfxOptions().setPath(store.toString()).setPassword(PASSWORD);
  }

  private static KeyStoreOptions trust(Path store) {
    return new KeyStoreOptions().setType("PKCS12").setPath(store.toString()).setPassword(PASSWORD);
  }

  private Future<Vertx> node(EventBusOptions bus) {
    System.setProperty("hazelcast.phone.home.enabled", "false");
    return Vertx.builder().with(new VertxOptions().setEventBusOptions(bus))
      .withClusterManager(new HazelcastClusterManager(LocalCluster.hazelcastConfig(clusterName)))
      .buildClustered();
  }

  /** A PKCS#12 store with one self-signed key pair for 127.0.0.1, made with keytool. */
  private static Path store(Path dir, String name) throws Exception {
    Path store = dir.resolve(name + ".p12");
    Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
      "-genkeypair", "-alias", "node", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
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
