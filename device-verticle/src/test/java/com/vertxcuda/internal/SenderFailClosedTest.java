package com.vertxcuda.internal;

import com.vertxcuda.Addresses;
import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.TestDevices;
import com.vertxcuda.message.AllocRequest;
import com.vertxcuda.testing.LocalCluster;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The internals adapter fails closed: on a clustered node where the sending node of a message
 * cannot be read (as on a Vert.x without {@code ClusteredMessage.getSender()}), an allocation is
 * refused FORBIDDEN saying so, never recorded without an owner; once it can be read, it is served.
 */
@ExtendWith(VertxExtension.class)
class SenderFailClosedTest {

  private Vertx node;

  @AfterEach
  void close(VertxTestContext ctx) {
    VertxInternals.senderReadable = true;
    (node == null ? Future.<Void>succeededFuture() : node.close()).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void anAllocationWhoseSenderCannotBeIdentifiedIsRefused(VertxTestContext ctx) {
    String cluster = "vertx-cuda-sender-" + ProcessHandle.current().pid();
    LocalCluster.node(cluster)
      .compose(v -> {
        node = v;
        return TestDevices.deploy(v, TestDevices.options());
      })
      .compose(id -> {
        String device = Addresses.device(Nodes.self(node), 0);
        VertxInternals.senderReadable = false;
        return node.eventBus().request(device, new AllocRequest(DType.F32, 16))
          .transform(ar -> {
            VertxInternals.senderReadable = true;
            ctx.verify(() -> {
              assertTrue(ar.failed(), "served without an owner: " + ar.result());
              ReplyException e = assertInstanceOf(ReplyException.class, ar.cause());
              assertEquals(FailureCode.FORBIDDEN.code(), e.failureCode(), e.getMessage());
              assertTrue(e.getMessage().contains("sender of this request could not be identified"), e.getMessage());
            });
            return node.eventBus().request(device, new AllocRequest(DType.F32, 16));
          });
      })
      .onComplete(ctx.succeeding(served -> ctx.completeNow()));
  }
}
