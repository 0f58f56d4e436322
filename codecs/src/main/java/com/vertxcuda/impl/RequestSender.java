package com.vertxcuda.impl;

import com.vertxcuda.Failures;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;

import java.util.ArrayList;
import java.util.List;

/**
 * Sends typed requests to one address and turns failures into {@link com.vertxcuda.CudaException}s.
 * Every client sends through here, which is what keeps requests made on one Vert.x context in the
 * order they were made even when a client holds some back (see {@link Held}).
 */
public final class RequestSender {

  /**
   * Requests a client holds back until the end of the current task (a coalescing client). Any
   * request another client sends from the same context first makes the holder send them, so the
   * device sees requests in the order they were made: a coalesced GEMM, then a download of its
   * output, arrive in that order.
   */
  public interface Held {
    /** Sends what is held now (on the context that holds it). */
    void sendHeld();
  }

  private static final Object HELD = new Object();

  private final Vertx vertx;
  private final String address;
  private final DeliveryOptions options;

  public RequestSender(Vertx vertx, String address, long timeoutMillis) {
    this.vertx = vertx;
    this.address = address;
    this.options = new DeliveryOptions().setSendTimeout(timeoutMillis);
  }

  public Vertx vertx() {
    return vertx;
  }

  public String address() {
    return address;
  }

  public <R> Future<R> request(Object body) {
    sendHeld(null);
    return vertx.eventBus().<R>request(address, body, options)
      .map(Message::body)
      .recover(t -> Future.failedFuture(Failures.toCudaException(t)));
  }

  /**
   * {@code holder} holds a request made on the current context: whatever other holders there hold
   * was made earlier and is sent first. Off a Vert.x context there is no order to keep.
   */
  public static void hold(Held holder) {
    sendHeld(holder);
    Context context = Vertx.currentContext();
    if (context != null) {
      List<Held> holders = context.get(HELD);
      if (holders == null) {
        holders = new ArrayList<>(2);
        context.put(HELD, holders);
      }
      if (!holders.contains(holder)) {
        holders.add(holder);
      }
    }
  }

  /** {@code holder} has sent what it held on the current context. */
  public static void released(Held holder) {
    Context context = Vertx.currentContext();
    List<Held> holders = context == null ? null : context.get(HELD);
    if (holders != null) {
      holders.remove(holder);
    }
  }

  // Makes every holder on the current context but {@code except} send what it holds.
  private static void sendHeld(Held except) {
    Context context = Vertx.currentContext();
    List<Held> holders = context == null ? null : context.get(HELD);
    if (holders == null || holders.isEmpty() || holders.size() == 1 && holders.get(0) == except) {
      return;
    }
    List<Held> sending = new ArrayList<>(holders);
    holders.clear();
    for (Held h : sending) {
      if (h == except) {
        holders.add(h);
      } else {
        h.sendHeld();
      }
    }
  }
}
