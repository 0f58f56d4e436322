package com.vertxcuda.device;

import com.vertxcuda.Addresses;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.FailureCode;
import com.vertxcuda.internal.Nodes;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.testing.LocalCluster;
import io.vertx.core.Future;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static com.vertxcuda.device.TestDevices.floats;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two clustered nodes on 127.0.0.1: the client node has no device and uses only the client module
 * to allocate, upload and download on the other node's device.
 */
@ExtendWith(VertxExtension.class)
class ClusterTest {

  private final TwoNodes nodes = new TwoNodes();

  @AfterEach
  void close(VertxTestContext ctx) {
    nodes.close().onComplete(ctx.succeedingThenComplete());
  }

  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void clientOnOneNodeUsesTheDeviceOfAnother(VertxTestContext ctx) {
    String cluster = "vertx-cuda-test-" + ProcessHandle.current().pid();
    nodes.start(cluster)
      .compose(n -> DeviceRegistry.list(n.client))
      .compose(devices -> {
        assertEquals(1, devices.size(), "registered devices: " + devices);
        DeviceInfo remote = devices.get(0);
        assertEquals(Nodes.self(nodes.gpu), remote.getNode());
        assertNotEquals(Nodes.self(nodes.client), remote.getNode());
        DeviceClient client = DeviceClient.create(nodes.client, remote);
        float[] values = {3.5f, -1f, 0f, 1e6f, 42f};
        return client.alloc(DType.F32, values.length)
          .compose(h -> client.upload(h, floats(values)).compose(x -> client.download(h.view(1, 3))))
          .compose(b -> {
            assertArrayEquals(new float[] {-1f, 0f, 1e6f}, floats(b));
            // Failures cross the cluster with their codes.
            return FailureCodesTest.expectFailure(FailureCode.BAD_REQUEST, client.alloc(DType.F32, -1));
          })
          .compose(x -> client.stats())
          .compose(stats -> {
            assertEquals(1, stats.getBuffersAllocated());
            return Future.succeededFuture(List.of());
          });
      })
      .onComplete(ctx.succeedingThenComplete());
  }

  /**
   * A copy between the devices of two nodes, made on one of them: chunked through the event bus,
   * ordered on both devices like the copies of one node.
   */
  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void copiesBetweenDevicesOfTwoNodes(VertxTestContext ctx) {
    String cluster = "vertx-cuda-test-copy-" + ProcessHandle.current().pid();
    NodeOptions one = new NodeOptions().setDeviceOptions(TestDevices.options().setBackend(BackendKind.HOST));
    int n = 5000; // 20 000 bytes: five 4 KiB views each way
    float[] data = new float[n];
    for (int i = 0; i < n; i++) {
      data[i] = i * 0.5f - 7;
    }
    LocalCluster.node(cluster)
      .compose(g -> {
        nodes.gpu = g;
        return DeviceNode.deploy(g, one);
      })
      .compose(d -> LocalCluster.node(cluster))
      .compose(c -> {
        nodes.client = c;
        return DeviceNode.deploy(c, one);
      })
      .compose(d -> {
        DeviceClient remote = DeviceClient.create(nodes.client, new DeviceClientOptions().setNode(Nodes.self(nodes.gpu))
          .setMaxMessageSize(4096));
        DeviceClient local = DeviceClient.create(nodes.client, new DeviceClientOptions().setMaxMessageSize(4096));
        return Future.all(remote.alloc(DType.F32, n), local.alloc(DType.F32, n)).compose(all -> {
          BufferHandle x = all.resultAt(0);
          BufferHandle y = all.resultAt(1);
          remote.upload(x, data);
          local.copy(x, y);
          remote.fill(x, -1);
          Future<float[]> onLocal = local.downloadFloats(y);
          local.copy(y.view(10, 100), x.view(0, 100));
          Future<float[]> back = remote.downloadFloats(x.view(0, 100));
          return Future.all(onLocal, back).map(v -> {
            assertArrayEquals(data, onLocal.result(), "the local device holds what the remote one held");
            assertArrayEquals(java.util.Arrays.copyOfRange(data, 10, 110), back.result());
            return v;
          });
        });
      })
      .onComplete(ctx.succeedingThenComplete());
  }
}
