package com.vertxcuda.internal;

import com.vertxcuda.Addresses;
import com.vertxcuda.CudaException;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.Failures;
import com.vertxcuda.Library;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.spi.tracing.VertxTracer;
import io.vertx.core.tracing.TracingPolicy;


/**
 * Sends typed requests to one address and turns failures into {@link com.vertxcuda.CudaException}s.
 * Every client sends through here, and every request takes its place in its caller's
 * {@link CallerOrder} (the one place that keeps requests made on one Vert.x context — or, off any
 * context, on one thread — in the order they were made). The sender's timeout travels with each
 * request ({@link #TIMEOUT_HEADER}). Every future completes on the caller's context and never on the
 * caller's stack, refusals included ({@link #failLater}), as Vert.x's own requests do.
 */
public final class RequestSender implements TransferRoute {

  /**
   * The header that carries the sender's timeout, in ms: the device answers TIMEOUT once it has
   * passed, and work that has not reached the GPU by then never does.
   */
  public static final String TIMEOUT_HEADER = "vertx-cuda-timeout";

  private final Vertx vertx;
  private final String address;
  private final String node;
  /** Null when the device is on this node: then no leave can strand a request. */
  private final ClusterWatch watch;
  private final DeliveryOptions options;
  private final long timeoutMillis;
  private final LocalRoutes local;
  /** The order its requests keep their place in; null: their caller's ({@link CallerOrder#current}). */
  private final CallerOrder order;

  public RequestSender(Vertx vertx, String address, long timeoutMillis) {
    this(vertx, address, timeoutMillis, null);
  }

  /**
   * A sender whose requests, and the transfers made through it, keep their place in {@code order}
   * instead of their caller's (a connection of a node's bulk side channel, {@link BulkServer}).
   */
  public RequestSender(Vertx vertx, String address, long timeoutMillis, CallerOrder order) {
    this.vertx = vertx;
    this.order = order;
    this.address = address;
    this.timeoutMillis = timeoutMillis;
    this.local = CudaRuntime.of(vertx).routes();
    this.node = Addresses.nodeOf(address);
    this.watch = vertx.isClustered() && !node.equals(Nodes.self(vertx)) ? CudaRuntime.of(vertx).clusterWatch() : null;
    this.options = new DeliveryOptions().setSendTimeout(timeoutMillis)
      .addHeader(TIMEOUT_HEADER, Long.toString(timeoutMillis));
  }

  /**
   * The one way a typed client is made: registers the codecs once and aims at the device that
   * {@code options} names (this node's when none) or, with {@code library}, at that library of it.
   */
  public static RequestSender of(Vertx vertx, DeviceClientOptions options, Library library) {
    CudaRuntime.of(vertx).registerCodecs();
    String node = options.getNode() == null ? Nodes.self(vertx) : options.getNode();
    String address = library == null ? Addresses.device(node, options.getDevice())
      : Addresses.library(node, options.getDevice(), library);
    return new RequestSender(vertx, address, options.getTimeout());
  }

  public Vertx vertx() {
    return vertx;
  }

  public String address() {
    return address;
  }

  /** The device's route when it is served in this JVM by the same Vert.x; null otherwise. */
  public LocalRoutes.Route localRoute() {
    return watch != null ? null : local.get(address);
  }

  /** The sender's timeout, in ms. */
  public long timeoutMillis() {
    return timeoutMillis;
  }

  /**
   * Runs {@code left} (on a thread of the cluster watch) when the device's node leaves the cluster;
   * returns what stops watching. Nothing to watch for a device on this node.
   */
  Runnable onNodeLeft(Runnable left) {
    return watch == null ? () -> { } : watch.onLeft(gone -> {
      if (gone.equals(node)) {
        left.run();
      }
    });
  }

  /** Whether the device is on another node of the cluster. */
  @Override
  public boolean remote() {
    return watch != null;
  }

  /** What the device lends when it is served in this JVM by the same Vert.x; null otherwise. */
  @Override
  public TransferMemory lent() {
    LocalRoutes.Route route = localRoute();
    return route == null ? null : route.transferMemory();
  }

  /** The order its requests keep their place in: the current caller's, unless it was made with one. */
  @Override
  public CallerOrder order() {
    return order != null ? order : CallerOrder.current();
  }

  /** The caller's context: where its futures complete. */
  @Override
  public Context callerContext() {
    return vertx.getOrCreateContext();
  }

  /**
   * Sends {@code body} in its place in the caller's order ({@link CallerOrder}): straight to the
   * device when it is served in this JVM by the same Vert.x ({@link LocalRoutes}), over the event
   * bus otherwise. A request to another node fails with CONTEXT_LOST as soon as that node is seen to
   * leave the cluster ({@link ClusterWatch}), at once when it is not in the cluster, and with
   * FORBIDDEN when the cluster refuses this node. The future completes on the caller's context,
   * never on the caller's stack.
   */
  public <R> Future<R> request(Object body) {
    Context context = callerContext();
    CallerOrder in = order();
    behindPolicyRead(in, context);
    return in.send(context, localRoute() != null, () -> dispatch(body, context, in));
  }

  /**
   * Takes a place in {@code order} for {@code hold} (a transfer, a coalesced group) as
   * {@link CallerOrder#hold} does, behind the cluster's policy read while a new node's is under way.
   */
  @Override
  public void hold(CallerOrder order, Context context, boolean anyThread, CallerOrder.Hold hold) {
    behindPolicyRead(order, context);
    order.hold(context, anyThread, hold);
  }

  // A new node's first requests and transfers to another node wait for the cluster's policy in their
  // caller's order: a place of their own given up on the caller's context once the read is done, so
  // what follows it goes out from that context, in order. (Sent from whichever context completed the
  // read, they were overtaken by a request made just after it: Vert.x keeps order per sending context.)
  private void behindPolicyRead(CallerOrder order, Context context) {
    if (watch == null || watch.policyRead().isComplete()) {
      return;
    }
    order.hold(context, false, new CallerOrder.Hold() {
      @Override
      public void turn() {
        CallerOrder.Hold self = this;
        watch.policyRead().onComplete(read -> context.runOnContext(v -> order.release(self)));
      }
    });
  }

  /**
   * Sends {@code body} at once, outside the caller's order: for a {@link CallerOrder.Hold} of
   * {@code order} sending what it holds in its own place (a hold taken through {@link #hold}, so
   * behind a new node's policy read). To another node it may first wait, in
   * order, behind {@code order}'s first use of another of the node's addresses
   * ({@link CallerOrder#behindFirstUse}). The future completes on {@code context}, never on this stack.
   */
  @Override
  public <R> Future<R> dispatch(Object body, Context context, CallerOrder order) {
    // Every request leaves through here (a typed call in its turn, each chunk of a transfer): its
    // client span, where Vert.x has a tracer. Without one this is one null check, nothing allocated.
    // A caller timing its work (TimingScope) asks the device for the request's phases the same way.
    VertxTracer<Object, Object> tracer = VertxInternals.tracer(context);
    TimingScope timing = TimingScope.of(context);
    RequestTrace trace = tracer == null && timing == null ? null
      : RequestTrace.start(tracer, context, body, address, timing != null);
    if (trace == null) {
      return dispatch(body, context, order, null);
    }
    // The future completes on {@code context}: the span ends there, as it started.
    return this.<R>dispatch(body, context, order, trace).andThen(ar -> {
      trace.end(tracer, context, ar.cause());
      if (timing != null) {
        timing.add(trace.timing());
      }
    });
  }

  // {@code trace}: the request's client span (null: none), carried to the device.
  private <R> Future<R> dispatch(Object body, Context context, CallerOrder order, RequestTrace trace) {
    LocalRoutes.Route route = localRoute();
    if (route != null) {
      return trace == null ? route.request(address, body, timeoutMillis, context)
        : route.request(address, body, timeoutMillis, context, trace);
    }
    if (watch == null) {
      return send(body, null, trace);
    }
    if (watch.refusal() != null) {
      return failLater(context, watch.refused());
    }
    Promise<R> held = Promise.promise();
    if (order.behindFirstUse(node, address, context, () -> {
      try {
        this.<R>remote(body, order, trace).onComplete(held);
      } catch (RuntimeException | Error e) {
        // Held, so never on the caller's stack: answered here, on its context.
        held.fail(Failures.toCudaException(e));
      }
    })) {
      return held.future();
    }
    return remote(body, order, trace);
  }

  // To another node, in its place: {@code order} counts it until the node answers it and, while its
  // address has not been looked up, holds the caller's sends to the node's other addresses until it
  // completes (answered, failed, or cut by the node's leave).
  private <R> Future<R> remote(Object body, CallerOrder order, RequestTrace trace) {
    Runnable settled = watch.lookedUp(address) ? null : order.firstUse(node, address);
    Future<R> sent;
    try {
      sent = watch.guard(node, send(body, order, trace));
    } catch (RuntimeException | Error e) {
      if (settled != null) {
        settled.run();
      }
      throw e;
    }
    if (settled != null) {
      sent.onComplete(ar -> settled.run());
    }
    return sent;
  }

  // To another node, {@code order} counts the request until the node answers it.
  private <R> Future<R> send(Object body, CallerOrder order, RequestTrace trace) {
    long forgets = order != null ? watch.forgets() : 0;
    Future<Message<R>> sent = vertx.eventBus().request(address, body, trace == null ? options : traced(trace));
    if (trace != null && trace.timed()) {
      sent = sent.andThen(ar -> {
        if (ar.succeeded()) {
          trace.phases(RequestTrace.decode(ar.result().headers().get(RequestTrace.PHASES_HEADER)));
        }
      });
    }
    if (order != null) {
      Runnable answered = order.sentOverBus(node, address);
      sent.onComplete(ar -> {
        if (ar.succeeded() || answeredByTheNode(ar.cause())) {
          watch.answeredAt(address, forgets);
          answered.run();
        }
      });
    }
    return sent.map(Message::body).recover(t -> Future.failedFuture(Failures.toCudaException(t)));
  }

  // The delivery of a traced request: the client span's headers, and no span of the event bus's own
  // for the send (the client span stands for it, and its headers must reach the device unchanged);
  // a timed request's asks for its phases.
  private DeliveryOptions traced(RequestTrace trace) {
    DeliveryOptions traced = new DeliveryOptions(options);
    if (trace.traced()) {
      traced.setTracingPolicy(TracingPolicy.IGNORE);
      trace.headers().forEach(h -> traced.addHeader(h.getKey(), h.getValue()));
    }
    if (trace.timed()) {
      traced.addHeader(RequestTrace.PHASES_HEADER, "1");
    }
    return traced;
  }

  /**
   * Whether {@code t} (as sent, or as a client's future failed with it) is a failure the node sent,
   * or no handler there took the request: nothing of it is left to admit.
   */
  static boolean answeredByTheNode(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof ReplyException) {
        ReplyFailure type = ((ReplyException) c).failureType();
        return type == ReplyFailure.RECIPIENT_FAILURE || type == ReplyFailure.NO_HANDLERS;
      }
    }
    return false;
  }

  /**
   * A future that fails with {@code failure} (as a {@link com.vertxcuda.CudaException}) on
   * {@code context}, in a task of its own: a refusal never runs the caller's handlers on its stack
   * (a handler that sends again on failure would recurse without bound).
   */
  public static <R> Future<R> failLater(Context context, Throwable failure) {
    Promise<R> promise = Promise.promise();
    CudaException e = Failures.toCudaException(failure);
    context.runOnContext(v -> promise.fail(e));
    return promise.future();
  }

  /** {@link #failLater} on the caller's context. */
  public <R> Future<R> refuse(Throwable failure) {
    return failLater(callerContext(), failure);
  }
}
