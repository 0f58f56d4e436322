package com.vertxcuda.device.isolation;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.context.ContextTier;
import com.vertxcuda.device.context.InFlight;
import com.vertxcuda.message.DescribeRequest;
import com.vertxcuda.DeviceInfo;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The device verticle's link reader dies on an {@link Error} (no heap for a frame, here thrown where
 * a reply is handed on): every call still on the link fails CONTEXT_LOST at once, naming it, and the
 * device host is reported lost, rather than the calls waiting for a heartbeat to miss.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
@Tag("runs-once")
@Tag("alone")
class LinkReaderErrorTest {

  @Test
  void theLinkReadersErrorFailsItsCallsAtOnce(Vertx vertx, VertxTestContext ctx) {
    InFlight inFlight = new InFlight();
    Promise<String> lost = Promise.promise();
    ContextTier.Listener listener = lost::tryComplete;
    ProcessContextTier.launch(vertx, DeviceHostLinkTest.options(), "local", 1, inFlight, listener)
      .onComplete(ctx.succeeding(t -> {
        ProcessContextTier tier = (ProcessContextTier) t;
        long[] thrownAt = new long[1];
        Promise<Object> first = Promise.promise();
        Promise<Object> second = Promise.promise();
        InFlight.Entry a = entry(inFlight, first);
        InFlight.Entry b = entry(inFlight, second);
        tier.send(a, a.body(), new ProcessContextTier.Call() {
          @Override
          public void replied(Object body) {
            a.reply(body);
            thrownAt[0] = System.nanoTime();
            throw new OutOfMemoryError("no heap for the next frame (injected)");
          }

          @Override
          public void failed(CudaException failure) {
            a.fail(failure);
          }
        });
        // Answered after the first, in the device host's order: its reply frame is never read.
        tier.send(b, b.body(), ProcessContextTier.Call.answering(b));
        Future.join(first.future(), second.future()).onComplete(ar -> ctx.verify(() -> {
          long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - thrownAt[0]);
          assertTrue(first.future().result() instanceof DeviceInfo, "the first call was answered");
          assertTrue(second.future().failed(), "the second call was answered from a dead reader");
          CudaException e = (CudaException) second.future().cause();
          assertEquals(FailureCode.CONTEXT_LOST, e.code(), e.getMessage());
          assertTrue(e.getMessage().contains("OutOfMemoryError"), e.getMessage());
          assertTrue(millis < 500, "the second call failed " + millis + " ms after the reader's Error");
          assertTrue(lost.future().isComplete() && lost.future().result().contains("OutOfMemoryError"),
            "the device host was not reported lost: " + lost.future().result());
          tier.stop().onComplete(x -> ctx.completeNow());
        }));
      }));
  }

  private static InFlight.Entry entry(InFlight inFlight, Promise<Object> answer) {
    return inFlight.entry(new DescribeRequest(), InFlight.Answer.of(answer), null,
      System.nanoTime() + TimeUnit.SECONDS.toNanos(30), null).own().track();
  }
}
