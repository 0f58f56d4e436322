package com.vertxcuda.samples.cluster;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceNode;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.NodeOptions;
import com.vertxcuda.impl.BulkServer;
import com.vertxcuda.impl.Nodes;
import com.vertxcuda.testing.LocalCluster;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.KeyStoreOptions;
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
 * The bulk side channel of a TLS event bus whose key and trust are {@code KeyStoreOptions} (a
 * PKCS#12 store made with keytool in a temporary folder): transfers past 1 MiB take it with the bus's
 * settings; a bus that names its key but no trust fails the device's deploy, saying why.
 */
@ExtendWith(VertxExtension.class)
class SideChannelTlsTest {

  private static final String PASSWORD = "test-secret";

  private final String clusterName = "vertx-cuda-tls-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
  private Vertx gpu;
  private Vertx client;

  @AfterEach
  void close() throws Exception {
    await(LocalCluster.close(client, gpu));
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aBusWithKeyStoreKeyAndTrustRunsTheSideChannelOverTls(@TempDir Path dir) throws Exception {
    KeyStoreOptions store = store(dir);
    gpu = await(node(bus(store, store, ClientAuth.REQUIRED)));
    await(DeviceNode.deploy(gpu, new NodeOptions().setDeviceOptions(new DeviceOptions().setBackend(BackendKind.HOST))));
    client = await(node(bus(store, store, ClientAuth.REQUIRED)));
    DeviceClient remote = DeviceClient.create(client, new DeviceClientOptions().setNode(Nodes.self(gpu)).setDevice(0));
    Buffer data = ClusterProcessesTest.pattern((5 << 20) + 8, 2);
    BufferHandle h = await(remote.alloc(DType.U8, data.length()));
    await(remote.upload(h, data));
    assertTrue(data.equals(await(remote.download(h))), "5 MiB came back byte-equal over the TLS side channel");
    assertTrue(BulkServer.connectionsAccepted(gpu) >= 1, "the transfers took the side channel");
    await(remote.free(h));
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aBusWithAKeyAndNoTrustFailsTheDeploy(@TempDir Path dir) throws Exception {
    gpu = await(node(bus(store(dir), null, ClientAuth.NONE)));
    ExecutionException failed = assertThrows(ExecutionException.class, () -> await(DeviceNode.deploy(gpu,
      new NodeOptions().setDeviceOptions(new DeviceOptions().setBackend(BackendKind.HOST)))));
    String message = String.valueOf(failed.getCause().getMessage());
    assertTrue(message.contains("TLS") && message.contains("trust"), message);
  }

  private static EventBusOptions bus(KeyStoreOptions key, KeyStoreOptions trust, ClientAuth auth) {
    EventBusOptions bus = new EventBusOptions().setHost("127.0.0.1").setClusterPublicHost("127.0.0.1").setPort(0);
    bus.setSsl(true).setKeyCertOptions(key).setTrustOptions(trust).setClientAuth(auth);
    return bus;
  }

  private Future<Vertx> node(EventBusOptions bus) {
    System.setProperty("hazelcast.phone.home.enabled", "false");
    return Vertx.builder().with(new VertxOptions().setEventBusOptions(bus))
      .withClusterManager(new HazelcastClusterManager(LocalCluster.hazelcastConfig(clusterName)))
      .buildClustered();
  }

  /** A PKCS#12 store with one self-signed key pair for 127.0.0.1, given through the generic store type. */
  private static KeyStoreOptions store(Path dir) throws Exception {
    Path store = dir.resolve("node.p12");
    Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
      "-genkeypair", "-alias", "node", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
      "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2", "-storetype", "PKCS12",
      "-keystore", store.toString(), "-storepass", PASSWORD, "-keypass", PASSWORD)
      .redirectErrorStream(true).start();
    assertEquals(0, keytool.waitFor(), new String(keytool.getInputStream().readAllBytes()));
    return new KeyStoreOptions().setType("PKCS12").setPath(store.toString()).setPassword(PASSWORD);
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(90, TimeUnit.SECONDS);
  }
}
