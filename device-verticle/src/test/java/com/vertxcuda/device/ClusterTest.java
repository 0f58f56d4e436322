package com.vertxcuda.device;

import com.vertxcuda.Addresses;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.FailureCode;
import com.vertxcuda.impl.Nodes;
import com.vertxcuda.message.DeviceInfo;
import com.vertxcuda.testing.LocalCluster;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
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
 * Two clustered nodes on 127.0.0.1: the client node has no device and uses only the codecs API
 * to allocate, upload and download on the other node's device.
 */
@ExtendWith(VertxExtension.class)
class ClusterTest {

  private Vertx gpuNode;
  private Vertx clientNode;

  @AfterEach
  void close(VertxTestContext ctx) {
    Future.join(gpuNode == null ? Future.succeededFuture() : gpuNode.close(),
        clientNode == null ? Future.succeededFuture() : clientNode.close())
      .onComplete(ctx.succeedingThenComplete());
  }

  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void clientOnOneNodeUsesTheDeviceOfAnother(VertxTestContext ctx) {
    String cluster = "vertx-cuda-test-" + ProcessHandle.current().pid();
    LocalCluster.node(cluster)
      .compose(g -> {
        gpuNode = g;
        return TestDevices.deploy(g, TestDevices.options());
      })
      .compose(id -> LocalCluster.node(cluster))
      .compose(c -> {
        clientNode = c;
        return DeviceRegistry.list(c);
      })
      .compose(devices -> {
        assertEquals(1, devices.size(), "registered devices: " + devices);
        DeviceInfo remote = devices.get(0);
        assertEquals(Nodes.self(gpuNode), remote.getNode());
        assertNotEquals(Nodes.self(clientNode), remote.getNode());
        DeviceClient client = DeviceClient.create(clientNode, remote);
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
}
