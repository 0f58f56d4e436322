package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.internal.Nodes;
import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.internal.ReclaimRequest;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Map;

import static com.vertxcuda.device.FailureCodesTest.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Who owns a buffer is the device's business: the node the event bus says sent the allocation. A
 * node's buffers count against its quota until freed or handed to the device ({@code keep}), and
 * nobody on the bus can make the device reclaim another node's buffers.
 */
@ExtendWith(VertxExtension.class)
class OwnershipTest {

  private static final long MIB = 1 << 20;

  @Test
  void aNodesBuffersCountAgainstItsQuotaUntilKeptOrFreed(Vertx vertx, VertxTestContext ctx) {
    TestDevices.deploy(vertx, TestDevices.options().setOwnerMemoryQuota(MIB)).compose(id -> {
      DeviceClient client = DeviceClient.create(vertx);
      String me = Nodes.self(vertx);
      return client.alloc(DType.U8, 3 * MIB / 4).compose(first -> client.stats().compose(s -> {
          assertEquals(Map.of(me, 3 * MIB / 4), s.getOwnerBytes(), "the allocating node owns it");
          return expect(client, FailureCode.OUT_OF_MEMORY, "quota", () -> client.alloc(DType.U8, MIB / 2));
        })
        // Handed to the device, the first buffer stops counting: the second now fits.
        .compose(x -> client.keep(first))
        .compose(kept -> {
          assertEquals(first, kept);
          return client.alloc(DType.U8, MIB / 2);
        })
        .compose(second -> client.stats().compose(s -> {
          assertEquals(Map.of(me, MIB / 2), s.getOwnerBytes());
          assertEquals(2, s.getBuffersAllocated());
          assertEquals(3 * MIB / 4 + MIB / 2, s.getBytesAllocated());
          return client.free(second);
        }))
        .compose(x -> client.stats())
        .compose(s -> {
          assertEquals(Map.of(), s.getOwnerBytes(), "nothing counts once freed");
          // The kept buffer stays usable and is freed like any other.
          return client.fill(first, 7).compose(h -> client.download(first.view(0, 4)));
        })
        .compose(b -> {
          assertEquals(7, b.getByte(3));
          return client.free(first);
        }));
    }).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void theBusCannotAskForAReclaim(Vertx vertx, VertxTestContext ctx) {
    TestDevices.deploy(vertx, TestDevices.options()).compose(id -> {
      DeviceClient client = DeviceClient.create(vertx);
      RequestSender raw = new RequestSender(vertx, client.address(), 30_000);
      return client.alloc(DType.F32, 16)
        .compose(h -> expect(client, FailureCode.BAD_REQUEST, "only the device sends it",
            () -> raw.request(new ReclaimRequest(Nodes.self(vertx))))
          .compose(x -> expect(client, FailureCode.BAD_REQUEST, "only the device sends it",
            () -> vertx.eventBus().request(client.address(), new ReclaimRequest(Nodes.self(vertx)))
              .recover(t -> io.vertx.core.Future.failedFuture(com.vertxcuda.Failures.toCudaException(t)))))
          .compose(x -> client.stats())
          .compose(s -> {
            assertEquals(1, s.getBuffersAllocated(), "nothing was reclaimed");
            return client.free(h);
          }));
    }).onComplete(ctx.succeedingThenComplete());
  }
}
