package com.vertxcuda.device.context;

import com.vertxcuda.Addresses;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.GpuEvent;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * What one context incarnation shares with its library verticles: the device context, the
 * allocation table, the stream ordering, and the one place that answers failures and reports a
 * poisoned context to the device tier.
 */
public final class ContextRuntime {

  private final Vertx vertx;
  private final DeviceOptions options;
  private final String node;
  private final long generation;
  private final String backend;
  private final DeviceContext device;
  private final AllocationTable allocations;
  private final StreamOrdering ordering;
  private final AtomicReference<String> poisonedBy = new AtomicReference<>();
  private final RequestSequencer sequencer = new RequestSequencer();

  public ContextRuntime(Vertx vertx, DeviceOptions options, String node, long generation, String backend,
                        DeviceContext device, AllocationTable allocations) {
    this.vertx = vertx;
    this.options = options;
    this.node = node;
    this.generation = generation;
    this.backend = backend;
    this.device = device;
    this.allocations = allocations;
    this.ordering = new StreamOrdering(device);
  }

  public Vertx vertx() { return vertx; }
  public DeviceOptions options() { return options; }
  public String node() { return node; }
  public int deviceIndex() { return options.getDevice(); }
  public long generation() { return generation; }
  /** "cuda" or "host". */
  public String backend() { return backend; }
  public DeviceContext device() { return device; }
  public AllocationTable allocations() { return allocations; }
  public StreamOrdering ordering() { return ordering; }
  /** The order in which requests claim their buffers (see {@link RequestSequencer}). */
  public RequestSequencer sequencer() { return sequencer; }

  public boolean isPoisoned() {
    return poisonedBy.get() != null;
  }

  /** The failure every request gets once the context is poisoned. */
  public CudaException lostFailure() {
    return new CudaException(FailureCode.CONTEXT_LOST, "context generation " + generation
      + " was poisoned by " + poisonedBy.get() + "; it is never touched again");
  }

  /**
   * Marks the context poisoned (first caller wins) and tells the device tier, which replaces or
   * gives up the context. After this no call reaches the device.
   */
  public void poison(String reason) {
    if (poisonedBy.compareAndSet(null, reason)) {
      vertx.eventBus().send(Addresses.supervisor(node, options.getDevice()),
        new JsonObject().put("generation", generation).put("reason", reason));
    }
  }

  /**
   * Runs {@code action} on {@code context} once every one of {@code uses} is reached (or failed),
   * releasing them: how memory and modules go back only after their last recorded use.
   */
  public void afterUses(List<GpuEvent> uses, Context context, Runnable action) {
    CompletableFuture<?>[] done = uses.stream()
      .map(e -> device.whenComplete(e).whenComplete((v, t) -> e.release()))
      .toArray(CompletableFuture[]::new);
    CompletableFuture.allOf(done).whenComplete((v, t) -> context.runOnContext(x -> action.run()));
  }

  /**
   * Replies with {@code reply.get()} once {@code event} is reached, then releases the event. A
   * supplier that throws (work that failed on the stream) answers with that failure instead.
   */
  public <T> void replyWhenDone(Message<?> message, GpuEvent event, Supplier<T> reply) {
    whenDone(event, err -> {
      long seq = Probe.ENABLED ? RequestSequencer.of(message) : 0;
      Probe.mark(seq, Probe.Point.COMPLETED);
      if (err != null) {
        fail(message, err);
        return;
      }
      T body;
      try {
        body = reply.get();
      } catch (RuntimeException e) {
        fail(message, e);
        return;
      }
      message.reply(body);
      Probe.mark(seq, Probe.Point.REPLIED);
    });
  }

  /**
   * Runs {@code then} once {@code event} is reached (with null) or has failed (with the failure),
   * on the thread that sees it, then releases the event.
   */
  public void whenDone(GpuEvent event, Consumer<Throwable> then) {
    device.whenComplete(event).whenComplete((v, err) -> {
      event.release();
      then.accept(err);
    });
  }

  /** Answers a failure; a sticky backend error poisons the context and answers CONTEXT_LOST. */
  public void fail(Message<?> message, Throwable t) {
    Failures.fail(message, failure(t));
  }

  /**
   * The typed failure that {@code t} stands for: a backend error's own code, CONTEXT_LOST for a
   * sticky one (which poisons the context first).
   */
  public CudaException failure(Throwable t) {
    Throwable cause = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    if (cause instanceof BackendException) {
      BackendException be = (BackendException) cause;
      if (be.isSticky()) {
        poison(be.getMessage());
        return lostFailure();
      }
      return new CudaException(be.code(), be.getMessage());
    }
    return Failures.toCudaException(cause);
  }
}
