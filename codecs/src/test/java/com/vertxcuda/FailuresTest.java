package com.vertxcuda;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The one failure mapping, against what the event bus really answers: a request discarded by a
 * consumer being unregistered (a device undeploying) is CONTEXT_LOST, not TIMEOUT; a request nobody
 * answers in time is TIMEOUT; an address nobody serves is CONTEXT_LOST.
 */
@ExtendWith(VertxExtension.class)
class FailuresTest {

  @Test
  void discardedOnUnregisterIsContextLostAndASilentConsumerIsTimeout(Vertx vertx, VertxTestContext ctx) {
    MessageConsumer<Object> leaving = vertx.eventBus().consumer("leaving", m -> m.reply("served"));
    vertx.eventBus().consumer("silent", m -> { });
    leaving.completion().compose(x -> {
      leaving.pause();
      Future<io.vertx.core.eventbus.Message<Object>> discarded = vertx.eventBus().request("leaving", "hello");
      return leaving.unregister().compose(y -> discarded.transform(ar -> Future.succeededFuture(ar.cause())));
    }).compose(discarded -> {
      ctx.verify(() -> {
        CudaException e = Failures.toCudaException(discarded);
        assertEquals(FailureCode.CONTEXT_LOST, e.code(), e.getMessage());
        assertTrue(e.getMessage().contains("stopped serving this address"), e.getMessage());
      });
      return vertx.eventBus().request("silent", "hello", new DeliveryOptions().setSendTimeout(50))
        .transform(ar -> Future.succeededFuture(ar.cause()));
    }).compose(silent -> {
      ctx.verify(() -> assertEquals(FailureCode.TIMEOUT, Failures.codeOf(silent)));
      return vertx.eventBus().request("nobody", "hello").transform(ar -> Future.succeededFuture(ar.cause()));
    }).onComplete(ctx.succeeding(nobody -> ctx.verify(() -> {
      assertEquals(FailureCode.CONTEXT_LOST, Failures.codeOf(nobody));
      ctx.completeNow();
    })));
  }
}
