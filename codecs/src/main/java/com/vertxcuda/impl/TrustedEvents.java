package com.vertxcuda.impl;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.message.DeviceEvent;
import com.vertxcuda.message.DeviceInfo;
import com.vertxcuda.message.DeviceState;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Handler;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The lifecycle events of one device that its subscriber may act on: anything on the bus can
 * publish to an events address, so each event is first confirmed by asking the device itself
 * ({@code describe}, a request only the device answers) and delivered only when the device's state
 * and generation agree with it; one that disagrees, or repeats one already delivered, is dropped
 * and counted. Confirmations run one after another, so events arrive in the order published.
 * On the subscriber's context only (the consumer's handler).
 */
public final class TrustedEvents {

  private final Supplier<Future<DeviceInfo>> describe;
  private final Handler<DeviceEvent> handler;
  private final AtomicLong dropped;
  /** The newest generation this subscriber has heard of (from the device or a delivered event). */
  private long known;
  /** The type and generation of the last event delivered: a replay of it is dropped. */
  private String lastDelivered;
  private Future<?> tail = Future.succeededFuture();

  /**
   * @param describe asks the device for its state and generation
   * @param dropped where events the device does not stand behind are counted
   */
  public TrustedEvents(Supplier<Future<DeviceInfo>> describe, Handler<DeviceEvent> handler, AtomicLong dropped) {
    this.describe = describe;
    this.handler = handler;
    this.dropped = dropped;
  }

  /** The newest generation confirmed so far. */
  public long known() {
    return known;
  }

  /**
   * Starts from the generation current when the subscription began (the device's answer to a
   * describe, or the registry's listing): events offered meanwhile wait for it, so none is judged
   * against an older one.
   */
  public void startFrom(Future<Long> generation) {
    tail = generation.transform(ar -> {
      if (ar.succeeded()) {
        known = Math.max(known, ar.result());
      }
      return Future.succeededFuture();
    });
  }

  /** Confirms {@code e} with the device, then delivers or drops it. */
  public void offer(DeviceEvent e) {
    tail = tail.transform(v -> describe.get().transform(ar -> {
      if (agrees(e, ar) && !key(e).equals(lastDelivered)) {
        lastDelivered = key(e);
        known = Math.max(known, e.getNewGeneration());
        handler.handle(e);
      } else {
        dropped.incrementAndGet();
      }
      return Future.succeededFuture();
    }));
  }

  /** Delivers an event raised on this node (a node that left can confirm nothing). */
  public void deliverLocal(DeviceEvent e) {
    tail = tail.transform(v -> {
      lastDelivered = key(e);
      handler.handle(e);
      return Future.succeededFuture();
    });
  }

  /** Whether the device's answer to a describe, {@code ar}, agrees with event {@code e}. */
  boolean agrees(DeviceEvent e, AsyncResult<DeviceInfo> ar) {
    // A device that no longer answers at its address is gone: that is all a LOST or REMOVED says.
    boolean gone = ar.failed() && ar.cause() instanceof CudaException
      && ((CudaException) ar.cause()).code() == FailureCode.CONTEXT_LOST;
    DeviceInfo d = ar.succeeded() ? ar.result() : null;
    switch (e.getType()) {
      case GENERATION_CHANGED:
        return d != null && e.getNewGeneration() > e.getOldGeneration() && e.getNewGeneration() > known
          && d.getGeneration() >= e.getNewGeneration();
      // Or the incarnation the event names has since been replaced (a newer generation answers: a
      // device undeployed and deployed again at once, whose REMOVED was being confirmed when the new
      // one came up). A forger gains nothing there: that generation is gone either way.
      case LOST:
        return gone || d != null && (d.getState() == DeviceState.LOST && d.getGeneration() == e.getNewGeneration()
          || d.getGeneration() > e.getNewGeneration());
      case REMOVED:
        return gone || d != null && (d.getState() == DeviceState.STOPPED || d.getGeneration() > e.getNewGeneration());
      case READY:
        return d != null && d.getState() == DeviceState.READY && e.getNewGeneration() >= known
          && d.getGeneration() >= e.getNewGeneration();
      default:
        return false;
    }
  }

  private static String key(DeviceEvent e) {
    return e.getType() + "/" + e.getNewGeneration();
  }
}
