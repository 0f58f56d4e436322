package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.kernel.KernelClient;
import com.vertxcuda.DeviceInfo;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static com.vertxcuda.device.TestDevices.floats;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A device host's limits hold without costing the device its context: one that never connects fails
 * the start within {@code deviceHostStartTimeout}, and a request too large for the link is refused on
 * its own (it ended the link, the device host and every client's buffers).
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 90, timeUnit = TimeUnit.SECONDS)
class DeviceHostLimitsTest {

  @AfterEach
  void killDeviceHosts() {
    for (long pid : IsolationTest.deviceHosts()) {
      ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    }
  }

  /** Its JVM waits for a debugger, as it would with a debugging option or a SIGSTOP before it connects. */
  @Test
  void aDeviceHostThatNeverConnectsFailsTheStartWithinItsTimeout(Vertx vertx, VertxTestContext ctx) {
    DeviceOptions options = IsolationTest.processOptions().setDeviceHostStartTimeout(3_000)
      .setDeviceHostJvmOptions(List.of("-agentlib:jdwp=transport=dt_socket,server=y,suspend=y,address=127.0.0.1:0"));
    long t0 = System.nanoTime();
    Promise<String> outcome = Promise.promise();
    TestDevices.deploy(vertx, options).onComplete(ar -> outcome.tryComplete(
      ar.succeeded() ? "deployed" : "failed after " + (System.nanoTime() - t0) / 1_000_000 + " ms: " + ar.cause()));
    vertx.setTimer(20_000, id -> outcome.tryComplete("STILL PENDING 20 s after a 3 s deviceHostStartTimeout"));
    outcome.future().onComplete(ctx.succeeding(s -> ctx.verify(() -> {
      assertTrue(s.startsWith("failed"), s);
      long ms = Long.parseLong(s.substring("failed after ".length(), s.indexOf(" ms")));
      assertTrue(ms < 10_000, s);
      assertTrue(s.contains("CONTEXT_LOST"), s);
      ctx.completeNow();
    })));
  }

  /** A typed client's PTX of 65 MiB: its frame would be past the link's 64 MiB. */
  @Test
  void anOversizedRequestIsRefusedAndTheDeviceKeepsItsContext(Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    KernelClient k = KernelClient.create(vertx);
    BufferHandle[] h = new BufferHandle[1];
    long[] gen = new long[1];
    String[] loadOutcome = new String[1];
    TestDevices.deploy(vertx, IsolationTest.processOptions())
      .compose(id -> c.alloc(DType.F32, 3))
      .compose(b -> {
        h[0] = b;
        gen[0] = b.generation();
        return c.upload(b, floats(1, 2, 3));
      })
      .compose(x -> {
        String ptx = "a".repeat((65 << 20));
        return k.loadPtx(ptx).transform(ar -> {
          loadOutcome[0] = ar.succeeded() ? "succeeded"
            : ar.cause() instanceof CudaException ? ((CudaException) ar.cause()).code() + ": " + ar.cause().getMessage()
            : String.valueOf(ar.cause());
          return Future.succeededFuture();
        });
      })
      .compose(x -> c.describe())
      .compose((DeviceInfo info) -> {
        return c.download(h[0]).transform(ar -> Future.succeededFuture(
          ar.succeeded() ? "download ok " + java.util.Arrays.toString(TestDevices.floats(ar.result()))
            : "download failed: " + ar.cause()).map(s -> new Object[] {info, s}));
      })
      .onComplete(ctx.succeeding(pair -> ctx.verify(() -> {
        DeviceInfo info = (DeviceInfo) pair[0];
        assertTrue(loadOutcome[0].startsWith("BAD_REQUEST"), "the oversized request: " + loadOutcome[0]);
        assertEquals(gen[0], info.getGeneration(), "the generation changed after one bad request");
        assertEquals("download ok [1.0, 2.0, 3.0]", pair[1]);
        ctx.completeNow();
      })));
  }
}
