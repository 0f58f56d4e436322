package com.vertxcuda.device;

import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.context.SubmissionLoop;
import com.vertxcuda.device.context.InFlight;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.internal.CopyInAbort;
import com.vertxcuda.internal.LocalRoutes;
import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.message.AllocRequest;
import com.vertxcuda.DeviceState;
import com.vertxcuda.message.FaultRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Requests and lent memory while a device has no ready context — it failed to start, it is
 * starting, it is rebuilt, its submission loop closed: every request still gets its one answer, on
 * time, and lent memory still goes back.
 */
@ExtendWith(VertxExtension.class)
class AnswersWithoutAContextTest {

  /** Holds the local route as any sender that looked it up while the device started holds it. */
  static final class HeldRoute extends DeviceVerticle {
    volatile LocalRoutes.Route route;

    HeldRoute(DeviceOptions options) {
      super(options);
    }

    @Override
    public Future<?> start() {
      Future<?> f = super.start();
      route = new RequestSender(vertx, address(), 1_000).localRoute();
      return f;
    }
  }

  @Test
  @Tag("alone")
  @Tag("runs-once") // pins its isolation: one pass covers it
  void aRequestReachingAdmissionAfterAFailedStartIsAnsweredContextLost(Vertx vertx, VertxTestContext ctx) {
    // No machine has a CUDA device 999: the start fails everywhere, on a GPU host too.
    DeviceOptions options = new DeviceOptions().setBackend(BackendKind.CUDA).setDevice(999)
      .setIsolation(Isolation.IN_PROCESS).setSpareDeviceHost(false);
    HeldRoute v = new HeldRoute(options);
    vertx.deployVerticle(v).onComplete(ar -> ctx.verify(() -> {
      assertTrue(ar.failed(), "CUDA device 999 started");
      assertNotNull(v.route);
      long t0 = System.nanoTime();
      v.route.request(v.address(), new AllocRequest(DType.F32, 8), 60_000, vertx.getOrCreateContext())
        .onComplete(answer -> ctx.verify(() -> {
          long ms = (System.nanoTime() - t0) / 1_000_000;
          assertTrue(answer.failed(), "allocated on a device that never started");
          CudaException e = assertInstanceOf(CudaException.class, answer.cause());
          assertEquals(FailureCode.CONTEXT_LOST, e.code());
          assertTrue(e.getMessage().contains("failed to start"), e.getMessage());
          assertTrue(ms < 1_000, "answered after " + ms + " ms");
          ctx.completeNow();
        }));
    }));
  }

  @Test
  @Tag("alone")
  void aRequestWaitingForAStartingContextTimesOutOnItsCallersDeadline(Vertx vertx, VertxTestContext ctx) {
    TestDevices.deploy(vertx, TestDevices.options().setOpenDelay(3_000).setRequestTimeout(30_000));
    DeviceClient c = DeviceClient.create(vertx, new DeviceClientOptions().setTimeout(300));
    SupervisionTest.describeWhenListening(vertx, c.address()).onComplete(ctx.succeeding(info -> {
      assertEquals(DeviceState.STARTING, info.getState());
      long t0 = System.nanoTime();
      c.alloc(DType.F32, 8).onComplete(ar -> ctx.verify(() -> {
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ar.failed(), "allocated before the context started");
        assertEquals(FailureCode.TIMEOUT, assertInstanceOf(CudaException.class, ar.cause()).code());
        // The caller's 300 ms, not the context's 3 s start.
        assertTrue(ms < 1_500, "a request with a 300 ms timeout was answered after " + ms + " ms");
        ctx.completeNow();
      }));
    }));
  }

  @Test
  void aTransferBufferGoesBackWhileTheDeviceIsRebuilt(Vertx vertx, VertxTestContext ctx) {
    assumeTrue(TestDevices.poisonRebuilds(), TestDevices.POISON_ENDS_CUDA);
    DeviceVerticle v = new DeviceVerticle(TestDevices.options().setOpenDelay(1_500));
    DeviceClient c = DeviceClient.create(vertx);
    vertx.deployVerticle(v).compose(id -> {
      Buffer b = v.allocateTransferBuffer(1 << 20);
      long held = v.heldTransferBytes();
      TestDevices.fault(vertx, c.address(), FaultRequest.Kind.POISON);
      return untilState(vertx, c, DeviceState.REBUILDING).map(x -> {
        assertTrue(held >= 1 << 20, "held " + held);
        assertTrue(v.releaseTransferBuffer(b), "a lent buffer could not go back while the device is rebuilt");
        assertFalse(v.releaseTransferBuffer(b), "a buffer went back twice");
        return null;
      });
    }).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  @Tag("alone")
  void aRequestServedBesideTheOrderIsAnsweredByAClosedLoop() throws Exception {
    SubmissionLoop loop = new SubmissionLoop("closed-loop-test", 0, () -> { });
    loop.start();
    loop.close(new CudaException(FailureCode.CONTEXT_LOST, "closed for the test"), () -> { }).get(5, TimeUnit.SECONDS);
    CompletableFuture<Object> ordered = new CompletableFuture<>();
    CompletableFuture<Object> beside = new CompletableFuture<>();
    loop.submit(request(new AllocRequest(DType.F32, 8), ordered));
    loop.submit(request(new CopyInAbort(null, 1), beside));
    for (CompletableFuture<Object> f : java.util.List.of(ordered, beside)) {
      ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
        () -> f.get(2, TimeUnit.SECONDS));
      assertEquals(FailureCode.CONTEXT_LOST, assertInstanceOf(CudaException.class, e.getCause()).code());
    }
  }

  // An entry of a table of its own, answering into {@code answer}: the one Request the toolkit serves.
  private static Request request(Object body, CompletableFuture<Object> answer) {
    Promise<Object> p = Promise.promise();
    p.future().onComplete(ar -> {
      if (ar.succeeded()) {
        answer.complete(ar.result());
      } else {
        answer.completeExceptionally(ar.cause());
      }
    });
    return new InFlight().entry(body, InFlight.Answer.of(p), null, System.nanoTime() + TimeUnit.SECONDS.toNanos(30),
      "test").track();
  }

  private static Future<Void> untilState(Vertx vertx, DeviceClient c, DeviceState want) {
    Promise<Void> p = Promise.promise();
    poll(vertx, c, want, p, 0);
    return p.future();
  }

  private static void poll(Vertx vertx, DeviceClient c, DeviceState want, Promise<Void> p, int n) {
    c.describe().onComplete(ar -> {
      if (ar.succeeded() && ar.result().getState() == want) {
        p.complete();
      } else if (n > 500) {
        p.fail("never " + want);
      } else {
        vertx.setTimer(5, id -> poll(vertx, c, want, p, n + 1));
      }
    });
  }
}
