package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceStats;
import com.vertxcuda.message.FaultRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Faults during load, with a ledger: four clients keep allocating, filling, downloading (and
 * checking what they read) and freeing while one fault strikes. Every request is answered exactly
 * once, only with the codes that fault can cause; no download ever reads bytes its chain did not
 * write; the device's own counters agree with the ledger; afterwards the device serves correctly.
 * Runs in the isolation mode of the suite (both in CI), and on cuda with real faults.
 */
@ExtendWith(VertxExtension.class)
class FaultsUnderLoadTest {

  enum Fault { POISON, STALL, FAIL_NEXT_ALLOCATION, FAIL_NEXT_OPERATION, OUT_OF_MEMORY, KILL_9, SIGSTOP, UNDEPLOY }

  static final int CHAINS = 4;
  static final int ELEMENTS = 4096;

  /** What a fault may answer, besides success. */
  private static Set<FailureCode> allowed(Fault fault) {
    switch (fault) {
      case FAIL_NEXT_ALLOCATION:
      case OUT_OF_MEMORY:
        return EnumSet.of(FailureCode.OUT_OF_MEMORY);
      case FAIL_NEXT_OPERATION:
        return EnumSet.of(FailureCode.LIBRARY_ERROR);
      case STALL:
        // Requests held by the hung context time out or are failed when it is replaced.
        return EnumSet.of(FailureCode.CONTEXT_LOST, FailureCode.STALE_HANDLE, FailureCode.TIMEOUT);
      default:
        return EnumSet.of(FailureCode.CONTEXT_LOST, FailureCode.STALE_HANDLE);
    }
  }

  private static boolean rebuilds(Fault fault) {
    return fault == Fault.POISON || fault == Fault.STALL || fault == Fault.KILL_9 || fault == Fault.SIGSTOP;
  }

  /** The supervision tests' ledger, and the downloads that read what their chain did not write. */
  static final class Ledger extends SupervisionTest.ReplyLedger {
    final AtomicInteger corrupt = new AtomicInteger();
  }

  @ParameterizedTest
  @EnumSource(Fault.class)
  void everyRequestAnsweredOnceAndNothingCorrupted(Fault fault, Vertx vertx, VertxTestContext ctx) {
    boolean process = TestDevices.isolation() == Isolation.PROCESS;
    assumeTrue(process || (fault != Fault.KILL_9 && fault != Fault.SIGSTOP), "a device host to signal needs process isolation");
    if (fault == Fault.POISON) {
      assumeTrue(TestDevices.poisonRebuilds(), TestDevices.POISON_ENDS_CUDA);
    }
    DeviceOptions options = TestDevices.options().setHeartbeatInterval(200).setHeartbeatTimeout(1_000)
      .setRequestTimeout(3_000).setRestartLimit(10).setSpareDeviceHost(false).setMemoryLimit(64L << 20);
    DeviceClient c = DeviceClient.create(vertx);
    Ledger ledger = new Ledger();
    AtomicBoolean running = new AtomicBoolean(true);
    Promise<DeviceEvent> changed = IsolationTest.next(c, DeviceEvent.Type.GENERATION_CHANGED);
    DeviceStats[] before = new DeviceStats[1];
    String[] deployment = new String[1];
    long[] pid = new long[1];

    TestDevices.deploy(vertx, options).compose(id -> {
      deployment[0] = id;
      return c.describe();
    }).compose(info -> {
      pid[0] = info.getPid();
      return c.stats();
    }).compose(s -> {
      before[0] = s;
      Promise<Void> chainsDone = Promise.promise();
      AtomicInteger live = new AtomicInteger(CHAINS);
      for (int i = 0; i < CHAINS; i++) {
        chain(vertx, c, ledger, running, i, 0).onComplete(ar -> {
          if (live.decrementAndGet() == 0) {
            chainsDone.complete();
          }
        });
      }
      Promise<Void> injected = Promise.promise();
      vertx.setTimer(300, t -> inject(vertx, c, fault, pid[0], deployment[0], ledger).<Void>mapEmpty().onComplete(injected));
      Future<?> settled = rebuilds(fault) ? changed.future() : injected.future();
      // Load goes on for a while after the fault took effect, then stops.
      return settled.transform(x -> {
        Promise<Void> p = Promise.promise();
        vertx.setTimer(fault == Fault.UNDEPLOY ? 50 : 800, t -> {
          running.set(false);
          p.complete();
        });
        return p.future();
      }).compose(x -> chainsDone.future());
    }).compose(x -> {
      ctx.verify(() -> {
        System.out.printf("[figure] faults under load %s (%s): %d requests, %d succeeded, failed %s%n", fault,
          TestDevices.isolation(), ledger.sent.get(), ledger.successes.get(), ledger.failures);
        assertEquals(ledger.sent.get(), ledger.replies.get(), "every request answered");
        assertEquals(0, ledger.corrupt.get(), "a download read bytes its chain did not write");
        assertTrue(ledger.successes.get() > 0, "the load ran");
        Set<FailureCode> ok = allowed(fault);
        ledger.failures.keySet().forEach(code -> assertTrue(ok.contains(code), fault + " answered " + code));
        if (fault != Fault.UNDEPLOY && fault != Fault.STALL && fault != Fault.SIGSTOP) {
          assertTrue(ledger.failed() > 0, "the fault reached the load");
        }
      });
      if (fault == Fault.UNDEPLOY) {
        return FailureCodesTest.expectFailure(FailureCode.CONTEXT_LOST, c.alloc(DType.F32, 1));
      }
      // The device's counters agree with the ledger (the stats request itself is not counted in it).
      return c.stats().compose(after -> {
        ctx.verify(() -> {
          long served = after.getOperationsServed() - before[0].getOperationsServed();
          long failedAtDevice = sum(after.getFailuresByCode()) - sum(before[0].getFailuresByCode());
          assertEquals(ledger.successes.get() + 1, served, "served: the ledger's successes and one stats");
          assertEquals(ledger.failed(), failedAtDevice, "failures by code: " + after.getFailuresByCode());
          assertEquals(0, after.getInFlight());
        });
        return FailureCodesTest.stillServes(c);
      });
    }).onComplete(ctx.succeedingThenComplete());
  }

  private static long sum(Map<String, Long> m) {
    return m == null ? 0 : m.values().stream().mapToLong(Long::longValue).sum();
  }

  /** alloc, fill with a value of its own, download and check, free; again, until the load stops. */
  private static Future<Void> chain(Vertx vertx, DeviceClient c, Ledger ledger, AtomicBoolean running, int chain,
                                    int round) {
    Promise<Void> done = Promise.promise();
    round(vertx, c, ledger, running, chain, round, done);
    return done.future();
  }

  // Each round starts on a later turn of the event loop, and no round's future waits on the next:
  // requests refused at once (the device undeployed) make neither an endless loop nor a deep stack.
  private static void round(Vertx vertx, DeviceClient c, Ledger ledger, AtomicBoolean running, int chain, int round,
                            Promise<Void> done) {
    if (!running.get()) {
      done.complete();
      return;
    }
    int value = chain * 100_000 + round;
    ledger.track(c.alloc(DType.I32, ELEMENTS)).compose(h -> ledger.track(c.fillInteger(h, value))
      .compose(x -> ledger.track(c.download(h)))
      .map(b -> {
        check(ledger, b, value);
        return h;
      })
      .eventually(() -> ledger.track(c.free(h))))
      .onComplete(ar -> vertx.runOnContext(v -> round(vertx, c, ledger, running, chain, round + 1, done)));
  }

  private static void check(Ledger ledger, Buffer b, int value) {
    if (b.length() != ELEMENTS * 4) {
      ledger.corrupt.incrementAndGet();
      return;
    }
    for (int i = 0; i < ELEMENTS; i++) {
      if (b.getIntLE(i * 4) != value) {
        ledger.corrupt.incrementAndGet();
        return;
      }
    }
  }

  private static Future<?> inject(Vertx vertx, DeviceClient c, Fault fault, long pid, String deployment,
                                  Ledger ledger) {
    switch (fault) {
      case POISON:
        return ledger.track(TestDevices.fault(vertx, c.address(), FaultRequest.Kind.POISON));
      case STALL:
        // Answered when the hung context is given up; the load meets the hang meanwhile.
        ledger.track(TestDevices.fault(vertx, c.address(), FaultRequest.Kind.STALL));
        return Future.succeededFuture();
      case FAIL_NEXT_ALLOCATION:
        return ledger.track(TestDevices.fault(vertx, c.address(), FaultRequest.Kind.FAIL_NEXT_ALLOCATION));
      case FAIL_NEXT_OPERATION:
        return ledger.track(TestDevices.fault(vertx, c.address(), FaultRequest.Kind.FAIL_NEXT_OPERATION));
      case OUT_OF_MEMORY:
        // Past the 64 MiB limit: refused, nothing else disturbed.
        return ledger.track(c.alloc(DType.U8, 65L << 20)).otherwiseEmpty();
      case KILL_9:
        return Future.succeededFuture(ProcessHandle.of(pid).map(ProcessHandle::destroyForcibly).orElse(false));
      case SIGSTOP:
        return vertx.executeBlocking(() -> new ProcessBuilder("kill", "-STOP", Long.toString(pid)).start().waitFor());
      default:
        return vertx.undeploy(deployment);
    }
  }
}
