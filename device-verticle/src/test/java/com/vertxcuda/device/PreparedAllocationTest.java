package com.vertxcuda.device;

import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A large allocation is made off the submission thread; when its request times out before the
 * allocation is taken, the memory and its reservation go back. With a 10 MiB limit, 6 MiB
 * allocations whose caller gives up after 1 ms alternate with ones that must succeed: a leaked
 * reservation would make the next one OUT_OF_MEMORY.
 */
@ExtendWith(VertxExtension.class)
class PreparedAllocationTest {

  @Test
  void aTimedOutLargeAllocationGivesItsMemoryBack(Vertx vertx, VertxTestContext ctx) {
    DeviceClient impatient = DeviceClient.create(vertx, new DeviceClientOptions().setTimeout(1));
    DeviceClient c = DeviceClient.create(vertx);
    AtomicInteger timedOut = new AtomicInteger();
    TestDevices.deploy(vertx, TestDevices.options().setMemoryLimit(10L << 20))
      .compose(id -> round(vertx, impatient, c, timedOut, 40))
      .compose(x -> c.stats())
      .onComplete(ctx.succeeding(s -> ctx.verify(() -> {
        System.out.println("[figure] prepared allocations timed out: " + timedOut.get() + " of 40");
        assertEquals(0, s.getBuffersAllocated());
        assertEquals(0, s.getBytesAllocated());
        ctx.completeNow();
      })));
  }

  private static Future<Void> round(Vertx vertx, DeviceClient impatient, DeviceClient c, AtomicInteger timedOut, int left) {
    if (left == 0) {
      return Future.succeededFuture();
    }
    return impatient.alloc(DType.U8, 6L << 20)
      .compose(h -> c.free(h).mapEmpty(), t -> {
        // OUT_OF_MEMORY where the last round's free has not returned its memory yet (memory returns
        // once the buffer's queued uses, its zeroing included, are done); a leak shows below.
        FailureCode code = Failures.codeOf(t);
        assertTrue(code == FailureCode.TIMEOUT || code == FailureCode.OUT_OF_MEMORY, t.getMessage());
        if (code == FailureCode.TIMEOUT) {
          timedOut.incrementAndGet();
        }
        return Future.succeededFuture();
      })
      // The device may still be making the timed-out allocation: wait until the memory is back.
      .compose(x -> retryAlloc(vertx, c, 50))
      .compose(x -> round(vertx, impatient, c, timedOut, left - 1));
  }

  private static Future<Void> retryAlloc(Vertx vertx, DeviceClient c, int tries) {
    return c.alloc(DType.U8, 6L << 20).compose(h -> c.free(h).mapEmpty(), t -> {
      assertTrue(tries > 0, "6 MiB never came back: " + t.getMessage());
      assertEquals(FailureCode.OUT_OF_MEMORY, Failures.codeOf(t), t.getMessage());
      Promise<Void> later = Promise.promise();
      vertx.setTimer(10, id -> later.complete());
      return later.future().compose(x -> retryAlloc(vertx, c, tries - 1));
    });
  }
}
