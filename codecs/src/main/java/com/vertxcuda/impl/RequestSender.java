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
 * Every client sends through here, which is what keeps requests made on one Vert.x context — or,
 * off any context, on one thread — in the order they were made, even when a client holds some back
 * (see {@link Held}). The sender's timeout travels with each request ({@link #TIMEOUT_HEADER}).
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

  /**
   * The header that carries the sender's timeout, in ms: the device answers TIMEOUT once it has
   * passed, and work that has not reached the GPU by then never does.
   */
  public static final String TIMEOUT_HEADER = "vertx-cuda-timeout";

  private static final Object HELD = new Object();

  private final Vertx vertx;
  private final String address;
  private final String node;
  /** Null when the device is on this node: then no leave can strand a request. */
  private final ClusterWatch watch;
  private final DeliveryOptions options;
  private final long timeoutMillis;
  private final java.util.Map<String, LocalRoutes.Route> local;

  public RequestSender(Vertx vertx, String address, long timeoutMillis) {
    this.vertx = vertx;
    this.address = address;
    this.timeoutMillis = timeoutMillis;
    this.local = LocalRoutes.of(vertx);
    this.node = com.vertxcuda.Addresses.nodeOf(address);
    this.watch = vertx.isClustered() && !node.equals(Nodes.self(vertx)) ? ClusterWatch.of(vertx) : null;
    this.options = new DeliveryOptions().setSendTimeout(timeoutMillis)
      .addHeader(TIMEOUT_HEADER, Long.toString(timeoutMillis));
  }

  public Vertx vertx() {
    return vertx;
  }

  public String address() {
    return address;
  }

  /** The device's route when it is served in this JVM by the same Vert.x; null otherwise. */
  public LocalRoutes.Route localRoute() {
    return local.get(address);
  }

  /** Whether the device is on another node of the cluster. */
  public boolean remote() {
    return watch != null;
  }

  /**
   * Sends {@code body}: straight to the device when it is served in this JVM by the same Vert.x
   * ({@link LocalRoutes}), over the event bus otherwise. A request to another node fails with
   * CONTEXT_LOST as soon as that node is seen to leave the cluster ({@link ClusterWatch}), at once
   * when it is not in the cluster, and with FORBIDDEN when the cluster refuses this node. The future
   * completes on the caller's context either way.
   */
  public <R> Future<R> request(Object body) {
    sendHeld(null);
    return dispatch(body);
  }

  /**
   * Sends {@code body} as {@link #request} does but without first sending what holders on this
   * context hold: for a holder sending what it holds, in its own order.
   */
  public <R> Future<R> dispatch(Object body) {
    LocalRoutes.Route route = local.get(address);
    if (route != null) {
      return route.request(address, body, timeoutMillis);
    }
    if (watch == null) {
      return send(body);
    }
    if (!watch.policyRead().isComplete()) {
      // Only a new node's first requests wait here, for the cluster's policy.
      return watch.policyRead().compose(v -> this.<R>dispatch(body));
    }
    if (watch.refusal() != null) {
      return Future.failedFuture(watch.refused());
    }
    return watch.guard(node, send(body));
  }

  private <R> Future<R> send(Object body) {
    return vertx.eventBus().<R>request(address, body, options)
      .map(Message::body)
      .recover(t -> Future.failedFuture(Failures.toCudaException(t)));
  }

  /**
   * {@code holder} holds a request made on the current context (or, off any Vert.x context, on the
   * current thread): whatever other holders there hold was made earlier and is sent first.
   */
  public static void hold(Held holder) {
    List<Held> holders = holders(true);
    synchronized (holders) {
      if (holders.size() == 1 && holders.get(0) == holder) {
        return; // the usual case: this holder alone, already known
      }
    }
    sendHeld(holders, holder);
    synchronized (holders) {
      holders.add(holder);
    }
  }

  /**
   * {@code holder} has sent what it held for the context or thread it held it on; any thread.
   * Returns the key to call this with: the current context's or thread's holders.
   */
  public static Object holdersKey() {
    return holders(true);
  }

  /** {@code holder} has sent what it held under {@code key} (from {@link #holdersKey}); any thread. */
  @SuppressWarnings("unchecked")
  public static void released(Object key, Held holder) {
    List<Held> holders = (List<Held>) key;
    synchronized (holders) {
      holders.remove(holder);
    }
  }

  private static void sendHeld(Held except) {
    List<Held> holders = holders(false);
    if (holders != null) {
      sendHeld(holders, except);
    }
  }

  // Makes every holder in {@code holders} but {@code except} send what it holds; leaves only
  // {@code except} (if it was there) in the list.
  private static void sendHeld(List<Held> holders, Held except) {
    List<Held> sending;
    synchronized (holders) {
      if (holders.isEmpty()) {
        return;
      }
      sending = new ArrayList<>(holders);
      holders.clear();
    }
    for (Held h : sending) {
      if (h != except) {
        h.sendHeld();
      }
    }
  }

  private static final ThreadLocal<List<Held>> THREAD_HOLDERS = new ThreadLocal<>();

  // The current context's holders, or off a Vert.x context the current thread's (created when
  // {@code create}; else null when there are none).
  private static List<Held> holders(boolean create) {
    Context context = Vertx.currentContext();
    List<Held> holders = context != null ? context.get(HELD) : THREAD_HOLDERS.get();
    if (holders == null && create) {
      holders = new ArrayList<>(2);
      if (context != null) {
        context.put(HELD, holders);
      } else {
        THREAD_HOLDERS.set(holders);
      }
    }
    return holders;
  }
}
