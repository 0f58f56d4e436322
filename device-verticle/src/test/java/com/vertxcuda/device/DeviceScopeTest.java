package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceScope;
import com.vertxcuda.FailureCode;
import com.vertxcuda.DeviceStats;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.ByteBuffer;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/** Buffers allocated through a scope are freed when it closes, however the work ended. */
@ExtendWith(VertxExtension.class)
class DeviceScopeTest {

  private Vertx vertx;
  private DeviceClient client;

  @BeforeEach
  void deploy(Vertx vertx, VertxTestContext ctx) {
    this.vertx = vertx;
    TestDevices.deploy(vertx, TestDevices.options()).map(id -> client = DeviceClient.create(vertx))
      .onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void aHandlerThatAllocatesThreeBuffersAndFailsLeavesNothingAllocated(VertxTestContext ctx) {
    RuntimeException boom = new RuntimeException("the handler failed");
    client.stats().compose(before -> client.<Void>withScope(scope -> scope.alloc(DType.F32, 1024)
          .compose(a -> scope.alloc(DType.F64, 77))
          .compose(b -> scope.alloc(DType.U8, 1 << 20))
          .compose(c -> client.upload(c.view(0, 4), ByteBuffer.wrap(new byte[] {1, 2, 3, 4})))
          .compose(c -> Future.failedFuture(boom)))
        .transform(outcome -> client.stats().map(after -> List.of(outcome.cause(), before, after))))
      .onComplete(ctx.succeeding(r -> ctx.verify(() -> {
        assertSame(boom, r.get(0), "the outcome is the handler's");
        DeviceStats before = (DeviceStats) r.get(1);
        DeviceStats after = (DeviceStats) r.get(2);
        assertEquals(before.getBuffersAllocated(), after.getBuffersAllocated());
        assertEquals(before.getBytesAllocated(), after.getBytesAllocated());
        ctx.completeNow();
      })));
  }

  @Test
  void aDetachedBufferOutlivesTheScope(VertxTestContext ctx) {
    client.stats().compose(before -> client.withScope(scope -> scope.alloc(DType.F32, 3)
          .compose(tmp -> scope.alloc(DType.F32, 3).compose(kept -> client.upload(tmp, new float[] {1, 2, 3})
            .compose(x -> client.copy(tmp, kept)))
          .map(scope::detach)))
        .compose(kept -> client.stats().compose(after -> client.downloadFloats(kept)
          .compose(values -> client.free(kept).map(x -> List.of(before, after, values))))))
      .onComplete(ctx.succeeding(r -> ctx.verify(() -> {
        DeviceStats before = (DeviceStats) r.get(0);
        DeviceStats after = (DeviceStats) r.get(1);
        assertEquals(before.getBuffersAllocated() + 1, after.getBuffersAllocated(), "only the detached one is left");
        assertArrayEquals(new float[] {1, 2, 3}, (float[]) r.get(2));
        ctx.completeNow();
      })));
  }

  @Test
  void closingPassesOverBuffersFreedAlreadyAndAttachedOnesGoToo(VertxTestContext ctx) {
    DeviceScope scope = client.scope();
    client.stats().compose(before -> scope.alloc(DType.I32, 8)
        .compose(a -> client.alloc(DType.I64, 8).map(scope::attach).map(b -> a))
        .compose(a -> client.free(a))
        .compose(x -> scope.close())
        .compose(x -> scope.close())
        .compose(x -> client.stats().map(after -> List.of(before, after))))
      .onComplete(ctx.succeeding(r -> ctx.verify(() -> {
        assertEquals(r.get(0).getBuffersAllocated(), r.get(1).getBuffersAllocated());
        assertEquals(0, scope.size());
        ctx.completeNow();
      })));
  }

  /** An allocation still on its way when the scope closes is freed when it arrives. */
  @Test
  void anAllocationOnItsWayWhenTheScopeClosesIsFreed(VertxTestContext ctx) {
    Promise<List<Object>> outcome = Promise.promise();
    // On one event loop, so both replies arrive after close() was called.
    vertx.getOrCreateContext().runOnContext(v -> client.stats().onComplete(s -> {
      DeviceStats before = s.result();
      DeviceScope scope = client.scope();
      Future<BufferHandle> late = scope.alloc(DType.F32, 1 << 20);
      scope.close()
        .compose(x -> scope.alloc(DType.F32, 1).transform(closed -> client.stats()
          .map(after -> List.of(late, closed, before, after))))
        .onComplete(outcome);
    }));
    outcome.future().onComplete(ctx.succeeding(r -> ctx.verify(() -> {
      Future<?> late = (Future<?>) r.get(0);
      assertEquals(FailureCode.BAD_REQUEST, ((CudaException) late.cause()).code(), String.valueOf(late.cause()));
      Future<?> closed = (Future<?>) r.get(1);
      assertEquals(FailureCode.BAD_REQUEST, ((CudaException) closed.cause()).code(), "a closed scope allocates nothing");
      assertEquals(((DeviceStats) r.get(2)).getBuffersAllocated(), ((DeviceStats) r.get(3)).getBuffersAllocated());
      ctx.completeNow();
    })));
  }
}
