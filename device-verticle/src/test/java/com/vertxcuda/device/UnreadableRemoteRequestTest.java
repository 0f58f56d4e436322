package com.vertxcuda.device;

import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.FailureCode;
import com.vertxcuda.PipelineHandle;
import io.vertx.core.Future;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A request another node sends that this node's wire cannot read (a clustered body is decoded when
 * the device first reads it) is answered BAD_REQUEST at once, not left to its sender's timeout, and
 * the sender's later requests — a bulk transfer too, which waits behind what the node has not
 * answered — go on.
 */
@ExtendWith(VertxExtension.class)
@Tag("alone")
class UnreadableRemoteRequestTest {

  private final TwoNodes nodes = new TwoNodes();

  @AfterEach
  void close(VertxTestContext ctx) {
    nodes.close().onComplete(ctx.succeedingThenComplete());
  }

  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void anUnreadableRequestIsAnsweredBadRequestAndTheCallersLaterTransferGoesOn(VertxTestContext ctx) {
    String cluster = "vertx-cuda-unreadable-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    nodes.start(cluster)
      .compose(n -> DeviceRegistry.list(n.client))
      .onComplete(ctx.succeeding(devices -> nodes.client.getOrCreateContext().runOnContext(v -> {
        DeviceClient client = DeviceClient.create(nodes.client, new DeviceClientOptions()
          .setNode(devices.get(0).getNode()).setDevice(devices.get(0).getDevice()).setTimeout(5_000));
        float[] big = new float[1 << 19]; // 2 MiB: over the bulk side channel
        for (int i = 0; i < big.length; i++) {
          big[i] = i;
        }
        long t0 = System.nanoTime();
        // A pipeline handle with no node: written by the client's wire, refused by the node's reader.
        client.replay(new PipelineHandle(null, 0, 0, 1, 0, false, 1, 2)).transform(ar -> {
          long ms = (System.nanoTime() - t0) / 1_000_000;
          ctx.verify(() -> {
            assertTrue(ar.failed(), "an unreadable replay was served");
            CudaException e = assertInstanceOf(CudaException.class, ar.cause());
            assertEquals(FailureCode.BAD_REQUEST, e.code(), e.getMessage());
            assertTrue(e.getMessage().contains("cannot be read"), e.getMessage());
            assertTrue(ms < 2_000, "answered after " + ms + " ms");
          });
          return client.alloc(DType.F32, big.length);
        }).compose(h -> client.upload(h, big).compose(x -> client.downloadFloats(h)))
          .onComplete(ctx.succeeding(back -> ctx.verify(() -> {
            assertEquals(big.length, back.length);
            assertEquals(big[big.length - 1], back[back.length - 1]);
            assertEquals(big[12345], back[12345]);
            ctx.completeNow();
          })));
      })));
  }
}
