package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.FailureCode;
import com.vertxcuda.PipelineHandle;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.TimeUnit;

import static com.vertxcuda.device.FailureCodesTest.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Recorded pipelines belong to the node that recorded them: a node holds at most
 * {@code maxPipelinesPerOwner} on a device and the device at most {@code maxPipelines}, each past its
 * limit QUEUE_FULL naming it; a release makes room; and a node that leaves the cluster takes its
 * pipelines with it, making room for the others.
 */
@ExtendWith(VertxExtension.class)
class PipelineOwnershipTest {

  private final TwoNodes nodes = new TwoNodes();

  @AfterEach
  void close(VertxTestContext ctx) {
    nodes.close().onComplete(ctx.succeedingThenComplete());
  }

  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void pipelinesAreCountedPerOwnerAndGoWithTheirNode(VertxTestContext ctx) {
    String cluster = "vertx-cuda-test-pipelines-" + ProcessHandle.current().pid();
    DeviceOptions options = TestDevices.options().setMaxPipelines(3).setMaxPipelinesPerOwner(2);
    DeviceClient[] clients = new DeviceClient[2];
    BufferHandle[] buffers = new BufferHandle[2];
    PipelineHandle[] first = new PipelineHandle[1];
    nodes.start(cluster, options)
      .compose(n -> DeviceRegistry.list(n.client))
      .compose(devices -> {
        clients[0] = DeviceClient.create(nodes.client, devices.get(0));
        clients[1] = DeviceClient.create(nodes.gpu);
        return clients[0].alloc(DType.F32, 4);
      })
      .compose(theirs -> {
        buffers[0] = theirs;
        return clients[1].alloc(DType.F32, 4);
      })
      .compose(mine -> {
        buffers[1] = mine;
        // The client node records two: its limit.
        return fill(clients[0], buffers[0]);
      })
      .compose(p1 -> {
        first[0] = p1;
        return fill(clients[0], buffers[0]);
      })
      .compose(p2 -> expect(clients[0], FailureCode.QUEUE_FULL, "maxPipelinesPerOwner = 2",
          () -> fill(clients[0], buffers[0]))
        // A release makes room for one more of its own.
        .compose(x -> clients[0].release(p2)))
      .compose(x -> fill(clients[0], buffers[0]))
      // The GPU node's own takes the device's third place; a fourth of anyone's is refused.
      .compose(p3 -> fill(clients[1], buffers[1]))
      .compose(p4 -> expect(clients[1], FailureCode.QUEUE_FULL, "maxPipelines = 3", () -> fill(clients[1], buffers[1])))
      // The client node leaves: its pipelines go with it, and the GPU node may record again.
      .compose(x -> nodes.client.close())
      .compose(x -> {
        nodes.client = null;
        return retryUntilRecorded(clients[1], buffers[1], System.nanoTime() + TimeUnit.SECONDS.toNanos(30));
      })
      .compose(p5 -> clients[1].fill(buffers[1], 0).compose(x -> clients[1].replay(p5)))
      .compose(x -> clients[1].download(buffers[1]))
      .compose(b -> {
        assertEquals(5f, b.getFloatLE(0), "the pipeline recorded after the departure replays");
        return expect(clients[1], FailureCode.NOT_FOUND, "pipeline #" + first[0].id(),
          () -> clients[1].replay(first[0]));
      })
      .onComplete(ctx.succeedingThenComplete());
  }

  private static Future<PipelineHandle> fill(DeviceClient client, BufferHandle target) {
    return client.record().fill(target, 5).build();
  }

  // The leave reaches the device once the cluster manager reports it: until then the device is full.
  private Future<PipelineHandle> retryUntilRecorded(DeviceClient client, BufferHandle target, long deadline) {
    return fill(client, target).recover(t -> {
      if (System.nanoTime() - deadline > 0) {
        return Future.failedFuture(t);
      }
      Promise<PipelineHandle> again = Promise.promise();
      nodes.gpu.setTimer(100, id -> retryUntilRecorded(client, target, deadline).onComplete(again));
      return again.future();
    });
  }
}
