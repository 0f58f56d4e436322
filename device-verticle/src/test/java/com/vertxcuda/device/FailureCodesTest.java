package com.vertxcuda.device;

import com.vertxcuda.Addresses;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.message.FaultRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.function.Supplier;

import static com.vertxcuda.device.TestDevices.floats;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** Each failure code, reached from the typed client; after each one the device still serves. */
@ExtendWith(VertxExtension.class)
class FailureCodesTest {

  /** Expects {@code call} to fail with {@code code}, then checks the device still round-trips data. */
  static Future<Void> expect(DeviceClient client, FailureCode code, String text, Supplier<Future<?>> call) {
    return call.get().transform(ar -> {
      if (ar.succeeded()) {
        fail("expected " + code + " but the request succeeded");
      }
      CudaException e = (CudaException) ar.cause();
      assertEquals(code, e.code(), e.getMessage());
      assertTrue(e.getMessage().contains(text), "'" + e.getMessage() + "' should mention '" + text + "'");
      return stillServes(client);
    });
  }

  static Future<Void> stillServes(DeviceClient client) {
    return client.alloc(DType.F32, 3)
      .compose(h -> client.upload(h, floats(1, 2, 3)).compose(x -> client.download(h)).compose(b -> {
        assertArrayEquals(new float[] {1, 2, 3}, floats(b));
        return client.free(h);
      }));
  }

  @Test
  void badRequestForbiddenNotFoundStale(Vertx vertx, VertxTestContext ctx) {
    TestDevices.deploy(vertx, TestDevices.options()).compose(id -> {
      DeviceClient c = DeviceClient.create(vertx);
      return c.alloc(DType.F32, 10).compose(h -> {
        BufferHandle forged = new BufferHandle(h.node(), h.device(), h.generation(), h.id(), h.dtype(), h.count(),
          h.tokenHigh() + 1, h.tokenLow(), 0, h.count());
        BufferHandle wrongDtype = new BufferHandle(h.node(), h.device(), h.generation(), h.id(), DType.I32, h.count(),
          h.tokenHigh(), h.tokenLow(), 0, h.count());
        BufferHandle outOfRange = new BufferHandle(h.node(), h.device(), h.generation(), h.id(), h.dtype(), h.count(),
          h.tokenHigh(), h.tokenLow(), 8, 5);
        BufferHandle stale = new BufferHandle(h.node(), h.device(), h.generation() + 5, h.id(), h.dtype(), h.count(),
          h.tokenHigh(), h.tokenLow(), 0, h.count());
        BufferHandle foreign = new BufferHandle("elsewhere", h.device(), h.generation(), h.id(), h.dtype(), h.count(),
          h.tokenHigh(), h.tokenLow(), 0, h.count());
        return expect(c, FailureCode.BAD_REQUEST, "count must be > 0", () -> c.alloc(DType.F32, 0))
          .compose(x -> expect(c, FailureCode.BAD_REQUEST, "dtype is missing", () -> c.alloc(null, 4)))
          .compose(x -> expect(c, FailureCode.BAD_REQUEST, "the target needs 40", () -> c.upload(h, floats(1, 2))))
          .compose(x -> expect(c, FailureCode.BAD_REQUEST, "holds F32", () -> c.download(wrongDtype)))
          .compose(x -> expect(c, FailureCode.BAD_REQUEST, "outside buffer", () -> c.download(outOfRange)))
          .compose(x -> expect(c, FailureCode.BAD_REQUEST, "belongs to device elsewhere", () -> c.download(foreign)))
          .compose(x -> expect(c, FailureCode.BAD_REQUEST, "handle is missing", () -> c.download(null)))
          .compose(x -> expect(c, FailureCode.BAD_REQUEST, "overlap", () -> c.copy(h.view(0, 5), h.view(3, 5))))
          .compose(x -> expect(c, FailureCode.BAD_REQUEST, "not a view", () -> c.free(h.view(1, 2))))
          .compose(x -> expect(c, FailureCode.BAD_REQUEST, "takes integral values", () -> c.fill(
            BufferHandle.issue(h.node(), 0, 1, 1, DType.I32, 1), 0.5)))
          .compose(x -> expect(c, FailureCode.FORBIDDEN, "token", () -> c.download(forged)))
          .compose(x -> expect(c, FailureCode.STALE_HANDLE, "generation " + (h.generation() + 5), () -> c.download(stale)))
          .compose(x -> c.free(h))
          .compose(x -> expect(c, FailureCode.NOT_FOUND, "does not exist or was freed", () -> c.download(h)))
          .compose(x -> expect(c, FailureCode.NOT_FOUND, "does not exist or was freed", () -> c.free(h)))
          .compose(x -> c.stats())
          .map(s -> {
            // The integral-value check fails in the client, before anything is sent.
            assertEquals(9L, s.getFailuresByCode().get("BAD_REQUEST"));
            assertEquals(1L, s.getFailuresByCode().get("FORBIDDEN"));
            assertEquals(2L, s.getFailuresByCode().get("NOT_FOUND"));
            return null;
          });
      });
    }).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void outOfMemoryPastTheLimitAndInjected(Vertx vertx, VertxTestContext ctx) {
    TestDevices.deploy(vertx, TestDevices.options().setMemoryLimit(1 << 20)).compose(id -> {
      DeviceClient c = DeviceClient.create(vertx);
      return c.alloc(DType.U8, 600_000).compose(a ->
        expect(c, FailureCode.OUT_OF_MEMORY, "memory limit", () -> c.alloc(DType.U8, 600_000))
          .compose(x -> c.free(a))
          .compose(x -> c.alloc(DType.U8, 900_000)))
        .compose(x -> TestDevices.fault(vertx, c.address(), FaultRequest.Kind.FAIL_NEXT_ALLOCATION))
        .compose(y -> expect(c, FailureCode.OUT_OF_MEMORY, "injected", () -> c.alloc(DType.F32, 4)))
        // The refused allocation cost nothing: the next one is served.
        .compose(y -> c.alloc(DType.F32, 4)).mapEmpty();
    }).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void libraryErrorFailsOneRequestOnly(Vertx vertx, VertxTestContext ctx) {
    TestDevices.deploy(vertx, TestDevices.options()).compose(id -> {
      DeviceClient c = DeviceClient.create(vertx);
      return c.alloc(DType.F32, 3).compose(h -> c.upload(h, floats(1, 2, 3))
        .compose(x -> TestDevices.fault(vertx, c.address(), FaultRequest.Kind.FAIL_NEXT_OPERATION))
        .compose(x -> expect(c, FailureCode.LIBRARY_ERROR, "injected", () -> c.fill(h, 9)))
        .compose(x -> c.download(h))
        .map(b -> {
          // The failed fill wrote nothing; the buffer keeps its bytes.
          assertArrayEquals(new float[] {1, 2, 3}, floats(b));
          return null;
        }));
    }).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void unsupportedWithoutFaultInjectionOrLibrary(Vertx vertx, VertxTestContext ctx) {
    TestDevices.deploy(vertx, TestDevices.options().setFaultInjection(false).setLibraries(List.of(Library.KERNEL)))
      .compose(id -> {
        DeviceClient c = DeviceClient.create(vertx);
        Future<Object> fault = TestDevices.fault(vertx, c.address(), FaultRequest.Kind.POISON);
        Future<Object> kernel = TestDevices.fault(vertx, Addresses.library(Addresses.LOCAL_NODE, 0, Library.KERNEL),
          FaultRequest.Kind.POISON);
        return expect(c, FailureCode.UNSUPPORTED, "fault injection needs", () -> fault)
          .compose(x -> expect(c, FailureCode.UNSUPPORTED, "not deployed", () -> kernel));
      }).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void timeoutThenTheHungContextIsReplaced(Vertx vertx, VertxTestContext ctx) {
    DeviceOptions options = TestDevices.options().setRequestTimeout(300).setHeartbeatInterval(200)
      .setHeartbeatTimeout(600);
    TestDevices.deploy(vertx, options).compose(id -> {
      DeviceClient c = DeviceClient.create(vertx);
      Promise<DeviceEvent> changed = Promise.promise();
      c.events(e -> {
        if (e.getType() == DeviceEvent.Type.GENERATION_CHANGED) {
          changed.tryComplete(e);
        }
      });
      TestDevices.fault(vertx, c.address(), FaultRequest.Kind.STALL);
      return expectFailure(FailureCode.TIMEOUT, c.alloc(DType.F32, 4))
        .compose(x -> changed.future())
        .compose(e -> {
          assertEquals(e.getOldGeneration() + 1, e.getNewGeneration());
          assertTrue(e.getReason().contains("heartbeat missed"), e.getReason());
          return stillServes(c);
        });
    }).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  @Tag("alone")
  void pastMaxInFlightARequestFailsAtOnceAndEveryRequestIsAnswered(Vertx vertx, VertxTestContext ctx) {
    DeviceOptions options = TestDevices.options().setMaxInFlight(3).setRequestTimeout(1500)
      .setHeartbeatInterval(200).setHeartbeatTimeout(2000);
    TestDevices.deploy(vertx, options).compose(id -> {
      DeviceClient c = DeviceClient.create(vertx);
      Promise<DeviceEvent> changed = IsolationTest.next(c, DeviceEvent.Type.GENERATION_CHANGED);
      // A hung context holds what reaches it: the stall itself and two allocations fill the three
      // places; the next three are turned away at once, long before the held ones time out.
      TestDevices.fault(vertx, c.address(), FaultRequest.Kind.STALL);
      List<Future<BufferHandle>> held = List.of(c.alloc(DType.F32, 4), c.alloc(DType.F32, 4));
      List<Future<BufferHandle>> turnedAway = List.of(c.alloc(DType.F32, 4), c.alloc(DType.F32, 4),
        c.alloc(DType.F32, 4));
      long sent = System.nanoTime();
      return Future.join(turnedAway).otherwiseEmpty().compose(x -> {
        assertTrue(System.nanoTime() - sent < 1_000_000_000L, "turned away at once");
        assertTrue(held.stream().noneMatch(Future::isComplete), "the held requests are still in flight");
        for (Future<BufferHandle> f : turnedAway) {
          CudaException e = (CudaException) f.cause();
          assertEquals(FailureCode.QUEUE_FULL, e.code(), e.getMessage());
          assertTrue(e.getMessage().contains("3 requests in flight"), e.getMessage());
        }
        // The held ones are answered too, each once, when the hung context is given up.
        return Future.join(held).otherwiseEmpty();
      }).compose(x -> {
        for (Future<BufferHandle> f : held) {
          assertTrue(f.failed());
          FailureCode code = ((CudaException) f.cause()).code();
          assertTrue(code == FailureCode.TIMEOUT || code == FailureCode.CONTEXT_LOST, code.toString());
        }
        return changed.future();
      }).compose(e -> stillServes(c)).compose(x -> c.stats()).map(stats -> {
        assertEquals(0, stats.getInFlight(), "nothing left in flight");
        return null;
      });
    }).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void timeoutFromTheClientsOwnDeadline(Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx, new DeviceClientOptions().setTimeout(200));
    // Nobody answers at this address: the client's deadline turns a missing device into a failure
    // a caller can handle, not a hang.
    vertx.eventBus().consumer(c.address(), m -> { });
    expectFailure(FailureCode.TIMEOUT, c.stats()).onComplete(ctx.succeedingThenComplete());
  }

  static Future<Void> expectFailure(FailureCode code, Future<?> f) {
    return f.transform(ar -> {
      if (ar.succeeded()) {
        fail("expected " + code);
      }
      assertEquals(code, ((CudaException) ar.cause()).code(), ar.cause().getMessage());
      return Future.succeededFuture();
    });
  }
}
