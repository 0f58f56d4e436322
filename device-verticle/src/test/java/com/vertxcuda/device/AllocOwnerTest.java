package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.impl.RequestSender;
import com.vertxcuda.message.AllocRequest;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static com.vertxcuda.device.FailureCodesTest.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** An allocation's owner is bounded: a device does not keep megabytes of owner text per buffer. */
@ExtendWith(VertxExtension.class)
class AllocOwnerTest {

  @Test
  void anOwnerPastTheLimitIsABadRequestNamingIt(Vertx vertx, VertxTestContext ctx) {
    TestDevices.deploy(vertx, TestDevices.options()).compose(id -> {
      DeviceClient client = DeviceClient.create(vertx);
      RequestSender raw = new RequestSender(vertx, client.address(), 30_000);
      String huge = "o".repeat(1 << 20);
      String longest = "o".repeat(AllocRequest.MAX_OWNER_LENGTH);
      return expect(client, FailureCode.BAD_REQUEST, "at most " + AllocRequest.MAX_OWNER_LENGTH,
          () -> raw.request(new AllocRequest(DType.U8, 1, huge)))
        .compose(x -> expect(client, FailureCode.BAD_REQUEST, "owner has " + (AllocRequest.MAX_OWNER_LENGTH + 1),
          () -> raw.request(new AllocRequest(DType.U8, 1, longest + "o"))))
        .compose(x -> raw.<BufferHandle>request(new AllocRequest(DType.U8, 1, longest)))
        .compose(h -> client.stats().map(s -> {
          // Only the allocation within the limit holds memory.
          assertEquals(1, s.getBuffersAllocated());
          assertEquals(1, s.getBytesAllocated());
          return h;
        }))
        .compose(client::free);
    }).onComplete(ctx.succeedingThenComplete());
  }
}
