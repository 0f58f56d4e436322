package com.vertxcuda.library;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceScope;
import com.vertxcuda.FailureCode;
import com.vertxcuda.PipelineRecorder;
import com.vertxcuda.kernel.KernelArg;
import com.vertxcuda.kernel.KernelClient;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Client calls made wrongly — malformed handles, a null argument array, a closed or empty scope, work
 * that throws, a recorder used after its build — fail typed (or, for the recorder, throw at once as
 * documented), and never complete on the caller's stack.
 */
class ClientMisuseTest extends HostDeviceTest {

  private static BufferHandle withNode(BufferHandle h, String node, int device) {
    return new BufferHandle(node, device, h.generation(), h.id(), h.dtype(), h.count(), h.tokenHigh(), h.tokenLow(),
      h.offset(), h.length());
  }

  /** Calls {@code call}: it must not throw, and its future must fail with {@code code}. */
  private void refused(String what, Supplier<Future<?>> call, FailureCode code) {
    Future<?> f;
    try {
      f = call.get();
    } catch (Throwable t) {
      fail(what + " threw " + t);
      return;
    }
    CudaException e = failure(f);
    assertEquals(code, e.code(), what + ": " + e.getMessage());
  }

  @Test
  void copyWithAMalformedHandleFailsRatherThanThrows() {
    BufferHandle good = f32(1, 2, 3, 4);
    BufferHandle other = f32(5, 6, 7, 8);
    refused("copy from a handle of device -1", () -> device.copy(withNode(good, good.node(), -1), other),
      FailureCode.BAD_REQUEST);
    refused("copy into a handle whose node has a dot", () -> device.copy(good, withNode(other, "a.b", 0)),
      FailureCode.BAD_REQUEST);
    refused("copy from a handle whose node is empty", () -> device.copy(withNode(good, "", 0), other),
      FailureCode.BAD_REQUEST);
    assertArrayEquals(new float[] {5, 6, 7, 8}, readF32(other));
  }

  @Test
  void launchWithNullArgsFailsRatherThanThrows() {
    KernelClient kernels = KernelClient.create(vertx);
    refused("launch with (KernelArg[]) null", () -> kernels.launch(null, "f", new int[] {1, 1, 1},
      new int[] {1, 1, 1}, 0, (KernelArg[]) null), FailureCode.BAD_REQUEST);
  }

  @Test
  void closedScopeAllocNeverCompletesOnTheCallersStack() {
    Promise<Boolean> onStack = Promise.promise();
    vertx.runOnContext(v -> {
      DeviceScope scope = device.scope();
      scope.close();
      AtomicBoolean returned = new AtomicBoolean();
      AtomicBoolean ranBeforeReturn = new AtomicBoolean();
      scope.alloc(DType.F32, 4).onComplete(ar -> {
        if (!returned.get()) {
          ranBeforeReturn.set(true);
        }
      });
      returned.set(true);
      onStack.complete(ranBeforeReturn.get());
    });
    assertFalse(await(onStack.future()), "DeviceScope.alloc on a closed scope completed on the caller's stack");
    DeviceScope closed = device.scope();
    await(closed.close());
    assertEquals(FailureCode.BAD_REQUEST, failure(closed.alloc(DType.F32, 4)).code());
  }

  @Test
  void emptyScopeCloseNeverCompletesOnTheCallersStack() {
    Promise<Boolean> onStack = Promise.promise();
    vertx.runOnContext(v -> {
      AtomicBoolean returned = new AtomicBoolean();
      AtomicBoolean ranBeforeReturn = new AtomicBoolean();
      device.scope().close().onComplete(ar -> {
        if (!returned.get()) {
          ranBeforeReturn.set(true);
        }
      });
      returned.set(true);
      onStack.complete(ranBeforeReturn.get());
    });
    assertFalse(await(onStack.future()), "DeviceScope.close of an empty scope completed on the caller's stack");
  }

  @Test
  void aRecorderTakesNoStepOnceBuiltAndSaysSo() {
    BufferHandle good = f32(1, 2);
    PipelineRecorder rec = device.record().fill(good, 1);
    await(rec.build());
    IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
      () -> rec.fill(good, 2));
    org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("built already"), e.getMessage());
    // A bad step too: the same answer, not a silent refusal of a build that never comes.
    org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> rec.fill(null, 2));
    assertEquals(FailureCode.BAD_REQUEST, failure(rec.build()).code());
  }

  @Test
  void withScopeWhoseWorkThrowsFailsTypedAndLater() {
    Promise<Object[]> seen = Promise.promise();
    vertx.runOnContext(v -> {
      AtomicBoolean returned = new AtomicBoolean();
      AtomicBoolean ranBeforeReturn = new AtomicBoolean();
      Future<Object> f = device.withScope(s -> { throw new IllegalStateException("boom"); });
      f.onComplete(ar -> {
        if (!returned.get()) {
          ranBeforeReturn.set(true);
        }
      });
      returned.set(true);
      f.onComplete(ar -> seen.complete(new Object[] {ranBeforeReturn.get(), ar.cause()}));
    });
    Object[] r = await(seen.future());
    assertFalse((Boolean) r[0], "withScope's failure completed on the caller's stack");
    CudaException e = org.junit.jupiter.api.Assertions.assertInstanceOf(CudaException.class, r[1]);
    assertEquals("boom", e.getCause().getMessage());
  }
}
