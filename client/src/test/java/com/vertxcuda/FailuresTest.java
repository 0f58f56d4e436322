package com.vertxcuda;

import com.vertxcuda.internal.CodedFailure;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

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

  /** A backend's status, as its table decided it. */
  private static final class Coded extends Exception implements CodedFailure {
    private final FailureCode code;
    private final boolean sticky;

    Coded(FailureCode code, boolean sticky, String message) {
      super(message);
      this.code = code;
      this.sticky = sticky;
    }

    @Override public FailureCode code() { return code; }
    @Override public boolean isSticky() { return sticky; }
  }

  @Test
  void heapExhaustionIsOutOfMemoryEvenWrappedOrFromAnotherThread() throws Exception {
    assertEquals(FailureCode.OUT_OF_MEMORY, Failures.codeOf(new OutOfMemoryError("Java heap space")));
    assertEquals(FailureCode.OUT_OF_MEMORY,
      Failures.codeOf(new RuntimeException("plan failed", new OutOfMemoryError("Java heap space"))));
    CompletableFuture<Object> elsewhere = CompletableFuture.supplyAsync(() -> {
      throw new OutOfMemoryError("Java heap space");
    });
    ExecutionException surfaced = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, elsewhere::get);
    CudaException e = Failures.toCudaException(surfaced);
    assertEquals(FailureCode.OUT_OF_MEMORY, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains("Java heap space"), e.getMessage());
    assertEquals(FailureCode.OUT_OF_MEMORY,
      Failures.toCudaException("the host engine failed", new CompletionException(new OutOfMemoryError("x"))).code());
  }

  @Test
  void backendCodesAreReadAsDataAndStickyReadsContextLost() {
    assertEquals(FailureCode.OUT_OF_MEMORY, Failures.codeOf(new Coded(FailureCode.OUT_OF_MEMORY, false, "cuMemAlloc failed")));
    // A backend status wrapped on its way (a loader's exception, another thread) keeps its code.
    assertEquals(FailureCode.OUT_OF_MEMORY, Failures.codeOf(
      new IllegalStateException("no pinned memory", new Coded(FailureCode.OUT_OF_MEMORY, false, "cuMemHostAlloc failed"))));
    Coded sticky = new Coded(FailureCode.LIBRARY_ERROR, true, "cuLaunchKernel failed: CUDA_ERROR_ILLEGAL_ADDRESS");
    assertEquals(FailureCode.CONTEXT_LOST, Failures.codeOf(sticky));
    assertEquals(sticky.getMessage(), Failures.stickyCause(new CompletionException(sticky)));
    assertEquals(null, Failures.stickyCause(new Coded(FailureCode.LIBRARY_ERROR, false, "x")));
  }

  @Test
  void overflowIsBadRequestAndTheRestLibraryErrorWithTheCausesMessage() {
    CudaException overflow = Failures.toCudaException(new CompletionException(new ArithmeticException("long overflow")));
    assertEquals(FailureCode.BAD_REQUEST, overflow.code());
    assertTrue(overflow.getMessage().contains("long overflow"), overflow.getMessage());
    CudaException unknown = Failures.toCudaException(new IllegalStateException("the plan is broken"));
    assertEquals(FailureCode.LIBRARY_ERROR, unknown.code());
    assertTrue(unknown.getMessage().contains("the plan is broken"), unknown.getMessage());
    CudaException mine = new CudaException(FailureCode.NOT_FOUND, "no buffer 7");
    assertEquals(mine, Failures.toCudaException("copying", mine));
    assertEquals(FailureCode.QUEUE_FULL, Failures.fromCode(429, "QUEUE_FULL: full").code());
    assertEquals(FailureCode.LIBRARY_ERROR, Failures.fromCode(999, "odd").code());
  }
}
