package com.vertxcuda.library;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.device.TestDevices;
import com.vertxcuda.message.FaultRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Every request caught in a loss is answered when the loss is decided, never left to its deadline;
 * and a caller that sends its next request from each completion never recurses (answers, refusals
 * included, complete on the caller's context in a task of their own, as Vert.x's own requests do).
 */
@Tag("alone")
class LossAnswersTest extends HostDeviceTest {

  @Override
  protected boolean devicePerTest() {
    return true; // its tests poison the device
  }

  static final int SENDERS = 8;
  static final int N = 32;
  static final long REQUEST_TIMEOUT = 30_000;

  @Override
  protected DeviceOptions options() {
    return TestDevices.options().setHeartbeatInterval(200).setHeartbeatTimeout(2_000)
      .setRequestTimeout(REQUEST_TIMEOUT).setRestartLimit(10);
  }

  /** Answers by code, and when the last one came. */
  static final class Ledger {
    final AtomicLong sent = new AtomicLong();
    final AtomicLong answered = new AtomicLong();
    final Map<FailureCode, LongAdder> failures = new ConcurrentHashMap<>();
    final AtomicLong lastFailureAt = new AtomicLong();
    final Map<Long, String> outstanding = new ConcurrentHashMap<>();
    /** The first message of each code, with the request that got it. */
    final Map<FailureCode, String> firstMessage = new ConcurrentHashMap<>();

    <T> Future<T> track(Future<T> f) {
      return track(f, "request");
    }

    <T> Future<T> track(Future<T> f, String what) {
      long id = sent.incrementAndGet();
      outstanding.put(id, what);
      return f.andThen(ar -> {
        outstanding.remove(id);
        answered.incrementAndGet();
        if (ar.failed()) {
          FailureCode code = ar.cause() instanceof CudaException ? ((CudaException) ar.cause()).code() : null;
          failures.computeIfAbsent(code == null ? FailureCode.LIBRARY_ERROR : code, c -> new LongAdder()).increment();
          firstMessage.putIfAbsent(code == null ? FailureCode.LIBRARY_ERROR : code, what + ": " + ar.cause().getMessage());
          lastFailureAt.accumulateAndGet(System.nanoTime(), Math::max);
        }
      });
    }
  }

  /**
   * SIGSTOP of the device host under a mixed load (alloc, upload, download, fill, GEMM from eight
   * senders): when the heartbeat gives up, every request caught is answered CONTEXT_LOST (or
   * STALE_HANDLE for a handle of the lost generation), none TIMEOUT at its 30 s deadline.
   */
  @Test
  void sigstopUnderMixedLoadIsAnsweredWhenTheLossIsDecided() throws Exception {
    assumeTrue(TestDevices.isolation() == Isolation.PROCESS, "a device host to stop needs process isolation");
    long pid = await(device.describe()).getPid();
    float[] a = floats(values(N * N, 1));
    BufferHandle ha = f32(a);
    Ledger ledger = new Ledger();
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicInteger live = new AtomicInteger(SENDERS);
    Promise<Void> stopped = Promise.promise();
    for (int s = 0; s < SENDERS; s++) {
      int sender = s;
      vertx.runOnContext(v -> mixed(ledger, running, ha, sender, 0, () -> {
        if (live.decrementAndGet() == 0) {
          stopped.complete();
        }
      }));
    }
    Thread.sleep(500);
    long stop = System.nanoTime();
    new ProcessBuilder("kill", "-STOP", Long.toString(pid)).start().waitFor();
    try {
      // Load goes on until the device serves again under a new generation, then stops.
      long deadline = System.currentTimeMillis() + 15_000;
      while (System.currentTimeMillis() < deadline && ledger.failures.isEmpty()) {
        Thread.sleep(50);
      }
      Thread.sleep(1_000);
      running.set(false);
      try {
        await(stopped.future());
      } catch (RuntimeException | AssertionError e) {
        throw new AssertionError("requests still unanswered " + (System.nanoTime() - stop) / 1_000_000
          + " ms after the stop: " + ledger.outstanding + "; failures " + ledger.failures + "; the device: "
          + await(device.stats()).toJson() + threads(), e);
      }
    } finally {
      new ProcessBuilder("kill", "-KILL", Long.toString(pid)).start().waitFor();
    }
    System.out.printf("[figure] SIGSTOP under mixed load (%s): %d requests, failures %s, last failure %.1f s after the stop%n",
      TestDevices.isolation(), ledger.sent.get(), ledger.failures, (ledger.lastFailureAt.get() - stop) / 1e9);
    assertEquals(ledger.sent.get(), ledger.answered.get(), "every request answered");
    assertTrue(ledger.failures.containsKey(FailureCode.CONTEXT_LOST), "the loss reached the load: " + ledger.failures);
    ledger.failures.keySet().forEach(code -> assertTrue(code == FailureCode.CONTEXT_LOST
      || code == FailureCode.STALE_HANDLE, "answered " + code + ": " + ledger.failures + "; " + ledger.firstMessage));
    assertTrue(ledger.lastFailureAt.get() - stop < 10_000_000_000L, "the last failure came "
      + (ledger.lastFailureAt.get() - stop) / 1e9 + " s after the stop, not when the loss was decided");
    BufferHandle after = f32(1, 2, 3);
    assertEquals(2f, readF32(after)[1], 0, "the device serves after the loss");
  }

  private static String threads() {
    StringBuilder b = new StringBuilder();
    Thread.getAllStackTraces().forEach((t, stack) -> {
      if (t.getName().startsWith("vert.x-eventloop")) {
        b.append("\n").append(t.getName()).append(" ").append(t.getState());
        for (int i = 0; i < Math.min(14, stack.length); i++) {
          b.append("\n    at ").append(stack[i]);
        }
      }
    });
    return b.toString();
  }

  // One sender: alloc, upload, fill, GEMM, download, free, over and over, each step after the last.
  private void mixed(Ledger ledger, AtomicBoolean running, BufferHandle a, int sender, int round, Runnable done) {
    if (!running.get()) {
      done.run();
      return;
    }
    Buffer bytes = Buffer.buffer(N * N * 4);
    for (int i = 0; i < N * N; i++) {
      bytes.appendFloatLE(sender + round);
    }
    ledger.track(device.alloc(DType.F32, N * N), "alloc")
      .compose(h -> ledger.track(device.upload(h, bytes), "upload")
        .compose(x -> ledger.track(device.fill(h, round), "fill"))
        .compose(x -> ledger.track(blas.gemm(Transpose.N, Transpose.N, N, N, N, 1.0, a, N, a, N, 0.0, h, N), "gemm"))
        .compose(x -> ledger.track(device.download(h), "download"))
        .eventually(() -> ledger.track(device.free(h), "free")))
      .onComplete(ar -> vertx.runOnContext(v -> mixed(ledger, running, a, sender, round + 1, done)));
  }

  /**
   * 64 requests in flight when the context is lost (kill -9 of the device host, or a poisoned
   * context in-process); each caller sends its next request from the completion of the last, in the
   * completion handler itself. Every request is answered, the stack never grows with the chain, and
   * the device serves afterwards.
   */
  @Test
  void callersChainingOnCompletionThroughALossNeverRecurse() throws Exception {
    assumeTrue(TestDevices.poisonRebuilds(), TestDevices.POISON_ENDS_CUDA);
    BufferHandle h = await(device.alloc(DType.F32, 1024));
    Ledger ledger = new Ledger();
    AtomicInteger deepest = new AtomicInteger();
    AtomicInteger thrown = new AtomicInteger();
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicInteger live = new AtomicInteger(64);
    Promise<Void> stopped = Promise.promise();
    vertx.runOnContext(v -> {
      for (int i = 0; i < 64; i++) {
        next(ledger, running, h, deepest, thrown, () -> {
          if (live.decrementAndGet() == 0) {
            stopped.complete();
          }
        });
      }
    });
    Thread.sleep(200);
    if (TestDevices.isolation() == Isolation.PROCESS) {
      long pid = await(device.describe()).getPid();
      ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    } else {
      TestDevices.fault(vertx, device.address(), FaultRequest.Kind.POISON);
    }
    long deadline = System.currentTimeMillis() + 15_000;
    while (System.currentTimeMillis() < deadline && ledger.failures.isEmpty()) {
      Thread.sleep(20);
    }
    Thread.sleep(1_000);
    running.set(false);
    await(stopped.future());
    System.out.printf("[figure] chained callers through a loss (%s): %d requests, failures %s, deepest stack %d%n",
      TestDevices.isolation(), ledger.sent.get(), ledger.failures, deepest.get());
    assertEquals(0, thrown.get(), "a completion handler threw (StackOverflowError?)");
    assertEquals(ledger.sent.get(), ledger.answered.get(), "every request answered");
    assertTrue(!ledger.failures.isEmpty(), "the loss reached the callers");
    assertTrue(deepest.get() < 300, "the stack grew with the chain: " + deepest.get() + " frames");
    assertEquals(2f, readF32(f32(1, 2, 3))[1], 0, "the device serves after the loss");
  }

  // Sends a fill; its completion handler sends the next one at once, on its own stack.
  private void next(Ledger ledger, AtomicBoolean running, BufferHandle h, AtomicInteger deepest, AtomicInteger thrown,
                    Runnable done) {
    ledger.track(device.fill(h, 1)).onComplete(ar -> {
      try {
        deepest.accumulateAndGet(Thread.currentThread().getStackTrace().length, Math::max);
        if (running.get()) {
          next(ledger, running, h, deepest, thrown, done);
        } else {
          done.run();
        }
      } catch (Throwable t) {
        thrown.incrementAndGet();
        done.run();
      }
    });
  }
}
