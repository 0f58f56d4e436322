package com.vertxcuda.internal;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The one place that keeps a caller's order, without a device: what is sent behind a hold waits
 * for its release (from any thread) and then goes in the order it was made; a hold that can be
 * hurried is; a failing send or holder is answered and never stops the queue.
 */
class CallerOrderTest {

  private Vertx vertx;

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void stop() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** Runs {@code work} on a plain thread of its own (the caller) and waits for it. */
  private static <T> T onAPlainThread(java.util.concurrent.Callable<T> work) throws Exception {
    CompletableFuture<T> done = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        done.complete(work.call());
      } catch (Exception e) {
        done.completeExceptionally(e);
      }
    });
    t.start();
    return done.get(10, TimeUnit.SECONDS);
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /**
   * Whose order a request takes: a context's and every duplicate of it (each HTTP request's, say)
   * share one; another context, and a plain thread, have their own. Kept where Vert.x keeps a
   * context's locals (the service provider registered it before this Vert.x sized them), so the
   * lookup on every request is an array slot.
   */
  @Test
  void aContextAndItsDuplicatesShareOneOrderAndOtherCallersHaveTheirOwn() throws Exception {
    ContextInternal first = (ContextInternal) vertx.getOrCreateContext();
    ContextInternal second = (ContextInternal) ((io.vertx.core.internal.VertxInternal) vertx).createEventLoopContext();
    CompletableFuture<CallerOrder> onFirst = new CompletableFuture<>();
    CompletableFuture<CallerOrder> onDuplicate = new CompletableFuture<>();
    CompletableFuture<CallerOrder> onSecond = new CompletableFuture<>();
    first.runOnContext(v -> onFirst.complete(CallerOrder.current()));
    first.duplicate().runOnContext(v -> onDuplicate.complete(CallerOrder.current()));
    second.runOnContext(v -> onSecond.complete(CallerOrder.current()));
    CallerOrder order = onFirst.get(10, TimeUnit.SECONDS);
    assertSame(order, onDuplicate.get(10, TimeUnit.SECONDS));
    assertNotSame(order, onSecond.get(10, TimeUnit.SECONDS));
    assertNotSame(order, onAPlainThread(CallerOrder::current));
    assertSame(order, first.getLocal(CallerOrder.Storage.LOCAL));
  }

  /**
   * A Vert.x whose contexts were sized before a local was registered (a class path where its service
   * file was not seen, say) has no slot for it: the root context's data map holds the value instead,
   * still one per context and shared by its duplicates; a Vert.x started after the registration
   * gives it its slot.
   */
  @Test
  void aLocalRegisteredAfterAVertxStartedLivesInItsContextsDataMap() throws Exception {
    io.vertx.core.spi.context.storage.ContextLocal<Object[]> late =
      io.vertx.core.spi.context.storage.ContextLocal.registerLocal(Object[].class);
    Object key = new Object();
    ContextInternal first = (ContextInternal) vertx.getOrCreateContext();
    ContextInternal second = (ContextInternal) ((io.vertx.core.internal.VertxInternal) vertx).createEventLoopContext();
    Object[] value = VertxInternals.rootLocal(first, late, key, () -> new Object[1]);
    assertSame(value, VertxInternals.rootLocal(first.duplicate(), late, key, () -> new Object[1]));
    assertNotSame(value, VertxInternals.rootLocal(second, late, key, () -> new Object[1]));
    assertSame(value, first.contextData().get(key), "the data map holds it on a Vert.x older than the local");
    Vertx later = Vertx.vertx();
    try {
      ContextInternal context = (ContextInternal) later.getOrCreateContext();
      Object[] slotted = VertxInternals.rootLocal(context, late, key, () -> new Object[1]);
      assertSame(slotted, context.getLocal(late));
      assertFalse(context.contextData().containsKey(key));
      assertSame(slotted, VertxInternals.rootLocal(context.duplicate(), late, key, () -> new Object[1]));
    } finally {
      later.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  /** A worker context may run on several threads at once: they all find the one order it has. */
  @Test
  void aWorkerContextOnSeveralThreadsAtOnceHasOneOrder() throws Exception {
    ContextInternal worker = ((io.vertx.core.internal.VertxInternal) vertx).createWorkerContext();
    java.util.Set<CallerOrder> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
    java.util.concurrent.CountDownLatch together = new java.util.concurrent.CountDownLatch(8);
    List<Future<Object>> all = new java.util.ArrayList<>();
    for (int i = 0; i < 8; i++) {
      all.add(worker.executeBlocking(() -> {
        together.countDown();
        together.await(10, TimeUnit.SECONDS);
        seen.add(CallerOrder.current());
        return null;
      }, false));
    }
    await(Future.all(all));
    assertEquals(1, seen.size());
  }

  /** A hold that keeps its place until released from outside. */
  static final class Held implements CallerOrder.Hold {
    final List<String> log;
    final String name;
    volatile boolean turned;
    volatile boolean hurried;
    final boolean hurryable;
    CallerOrder order;

    Held(List<String> log, String name, boolean hurryable) {
      this.log = log;
      this.name = name;
      this.hurryable = hurryable;
    }

    @Override
    public void turn() {
      turned = true;
      log.add(name);
    }

    @Override
    public void hurry() {
      hurried = true;
      if (hurryable) {
        order.release(this);
      }
    }
  }

  @Test
  void sendsBehindAHoldGoInOrderOnceItIsReleasedFromAnotherThread() throws Exception {
    List<String> log = new CopyOnWriteArrayList<>();
    Context context = vertx.getOrCreateContext();
    Object[] made = onAPlainThread(() -> {
      CallerOrder order = CallerOrder.current();
      Held transfer = new Held(log, "transfer", false);
      transfer.order = order;
      order.hold(context, true, transfer);
      Future<String> first = order.send(context, true, () -> {
        log.add("first");
        return Future.succeededFuture("first");
      });
      Future<String> second = order.send(context, true, () -> {
        log.add("second");
        return Future.succeededFuture("second");
      });
      return new Object[] {order, transfer, first, second};
    });
    CallerOrder order = (CallerOrder) made[0];
    Held transfer = (Held) made[1];
    assertEquals(List.of("transfer"), log, "nothing made after the hold went before its release");
    assertTrue(transfer.hurried, "the hold heard that a request waits behind it");
    assertFalse(((Future<?>) made[2]).isComplete());
    // Released from another thread (a copy thread, say): what waited goes, in order.
    order.release(transfer);
    assertEquals("first", await((Future<String>) made[2]));
    assertEquals("second", await((Future<String>) made[3]));
    assertEquals(List.of("transfer", "first", "second"), log);
  }

  @Test
  void aHoldThatCanSendAtOnceIsHurriedByTheNextRequest() throws Exception {
    List<String> log = new CopyOnWriteArrayList<>();
    Context context = vertx.getOrCreateContext();
    Future<String> next = onAPlainThread(() -> {
      CallerOrder order = CallerOrder.current();
      Held group = new Held(log, "group", true);
      group.order = order;
      order.hold(context, true, group);
      return order.send(context, true, () -> {
        log.add("next");
        return Future.succeededFuture("next");
      });
    });
    assertEquals("next", await(next));
    assertEquals(List.of("group", "next"), log);
  }

  @Test
  void aFailingSendOrHolderIsAnsweredAndTheQueueGoesOn() throws Exception {
    Context context = vertx.getOrCreateContext();
    AtomicBoolean onCallersStack = new AtomicBoolean(true);
    Future<String>[] made = onAPlainThread(() -> {
      CallerOrder order = CallerOrder.current();
      Future<String> refused = order.send(context, true, () -> {
        throw new IllegalArgumentException("no such thing");
      });
      // Handlers run later, in a task of the caller's context, never on this stack.
      refused.onComplete(ar -> onCallersStack.set(false));
      order.hold(context, true, new CallerOrder.Hold() {
        @Override
        public void turn() {
          throw new IllegalStateException("a holder with a bug");
        }
      });
      Future<String> after = order.send(context, true, () -> Future.succeededFuture("after"));
      @SuppressWarnings("unchecked")
      Future<String>[] both = new Future[] {refused, after};
      return both;
    });
    Promise<Throwable> failure = Promise.promise();
    made[0].onComplete(ar -> failure.complete(ar.cause()));
    Throwable t = await(failure.future());
    assertTrue(t instanceof CudaException, "typed: " + t);
    assertEquals(FailureCode.BAD_REQUEST, ((CudaException) t).code());
    assertFalse(onCallersStack.get());
    assertEquals("after", await(made[1]), "a failing holder released its place");
  }
  @Test
  void theLastHoldIsKnownUntilSomethingIsMadeAfterItOrItReleases() throws Exception {
    List<String> log = new CopyOnWriteArrayList<>();
    Context context = vertx.getOrCreateContext();
    List<Object> seen = onAPlainThread(() -> {
      CallerOrder order = CallerOrder.current();
      List<Object> s = new java.util.ArrayList<>();
      s.add(String.valueOf(order.last())); // empty order: "null"
      Held first = new Held(log, "first", false);
      first.order = order;
      order.hold(context, true, first);
      s.add(order.last() == first); // its turn came at once: still the last place
      Held second = new Held(log, "second", false);
      second.order = order;
      order.hold(context, true, second);
      s.add(order.last() == second); // waiting behind the first: the last place now
      Future<String> request = order.send(context, true, () -> Future.succeededFuture("request"));
      s.add(String.valueOf(order.last())); // a request was made after both: no hold is last
      order.release(first);
      s.add(String.valueOf(order.last())); // the second holds; the request still waits behind it
      order.release(second);
      s.add(await(request));
      s.add(String.valueOf(order.last())); // all gone: empty again
      return s;
    });
    assertEquals(List.of("null", true, true, "null", "null", "request", "null"), seen);
    assertEquals(List.of("first", "second"), log);
  }
}
