package com.vertxcuda.internal;

import com.vertxcuda.Addresses;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.spi.cluster.ClusterManager;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The one place that knows which nodes are in the cluster and what the cluster requires, as this
 * node's cluster manager sees it. It polls the member list every {@link #POLL_MILLIS} ms (the
 * cluster manager's own node listener belongs to Vert.x), and when a node leaves it fails every
 * request still waiting for that node with CONTEXT_LOST and tells its listeners (the registry's
 * watchers, device event subscribers, devices that reclaim what the node owned).
 *
 * <p>One per Vert.x instance, held by its {@link CudaRuntime}; on an event bus that is not clustered
 * every node but this one is absent and nothing is polled.
 */
public final class ClusterWatch {

  /** How often the member list is read, in ms: a leave is acted on at most this long after the cluster manager sees it. */
  public static final long POLL_MILLIS = 100;
  /** How often the cluster's policy is read again, in ms. */
  static final long POLICY_MILLIS = 1_000;
  /** The policy key that says every node's event bus must use TLS. */
  public static final String TLS_REQUIRED = "eventBusTls";

  private static final System.Logger LOG = System.getLogger(ClusterWatch.class.getName());

  private final Vertx vertx;
  private final ClusterManager cluster;
  private final String self;
  private final boolean tls;
  private volatile Set<String> members;
  private volatile String refusal;
  private volatile Future<Void> firstCheck = Future.succeededFuture();
  /** The poll and policy timers; -1 before they are set, -2 once stopped (none is set after). */
  private final long[] timers = {-1, -1};
  private final Map<String, Set<Promise<?>>> waiting = new ConcurrentHashMap<>();
  private final List<Consumer<String>> leftListeners = new CopyOnWriteArrayList<>();
  /**
   * Addresses a node of the cluster has answered a request at since Vert.x last looked up who serves
   * them ({@link #lookedUp}).
   */
  private final Set<String> lookedUp = ConcurrentHashMap.newKeySet();
  /**
   * Counts the times an address was dropped from {@link #lookedUp}: an answer to a request sent
   * before a drop must not put its address back (Vert.x may be looking it up again right now).
   */
  private final AtomicLong forgets = new AtomicLong();

  ClusterWatch(Vertx vertx) {
    this.vertx = vertx;
    this.cluster = VertxInternals.clusterManager(vertx);
    this.self = Nodes.self(vertx);
    this.tls = VertxInternals.eventBusTls(vertx);
    this.members = readMembers();
    if (vertx.isClustered() && !VertxInternals.nodeSelectorReadable(vertx)) {
      LOG.log(System.Logger.Level.WARNING, "this Vert.x's event-bus node selector cannot be read: every request to "
        + "another node waits for the caller's earlier requests to that node's other addresses (ordered, slower)");
    }
  }

  /** Starts polling (a clustered Vert.x only); its runtime calls it once, before anyone else sees the watch. */
  void start() {
    if (cluster == null) {
      return;
    }
    // On a context of its own: a timer set on a verticle's context ends with that verticle's
    // undeployment, and the watch lives as long as its Vert.x, whoever used it first.
    VertxInternals.newEventLoopContext(vertx).runOnContext(v -> {
      synchronized (timers) {
        if (timers[0] == -1) {
          timers[0] = vertx.setPeriodic(POLL_MILLIS, id -> poll());
          timers[1] = vertx.setPeriodic(POLICY_MILLIS, id -> checkPolicy());
        }
      }
    });
    // Bounded (ClusterMaps): what waits for it in callers' orders has no deadline running yet. A
    // read the cluster manager does not answer lets them go (the periodic check still refuses later
    // ones if the cluster says so).
    firstCheck = checkPolicy().otherwiseEmpty();
  }

  /** Stops polling, for good: its Vert.x is closing, and the cluster manager goes next. */
  void stop() {
    synchronized (timers) {
      if (timers[0] >= 0) {
        vertx.cancelTimer(timers[0]);
        vertx.cancelTimer(timers[1]);
      }
      timers[0] = -2;
    }
  }

  private Set<String> readMembers() {
    if (cluster == null) {
      return Set.of(self);
    }
    try {
      return Set.copyOf(cluster.getNodes());
    } catch (RuntimeException e) {
      return members == null ? Set.of(self) : members;
    }
  }

  private void poll() {
    Set<String> before = members;
    Set<String> now = readMembers();
    members = now;
    for (String node : before) {
      if (!now.contains(node)) {
        left(node);
      }
    }
  }

  private void left(String node) {
    LOG.log(System.Logger.Level.INFO, "cluster node " + node + " left; failing what waits for it");
    // Its addresses are forgotten: the set only names nodes of the cluster (Vert.x forgets them too).
    if (lookedUp.removeIf(a -> node.equals(Addresses.nodeOf(a)))) {
      forgets.incrementAndGet();
    }
    Set<Promise<?>> pending = waiting.remove(node);
    if (pending != null) {
      CudaException lost = nodeLost(node);
      pending.forEach(p -> p.tryFail(lost));
    }
    for (Consumer<String> l : leftListeners) {
      try {
        l.accept(node);
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, "a node-left listener failed: " + e);
      }
    }
  }

  private static CudaException nodeLost(String node) {
    return new CudaException(FailureCode.CONTEXT_LOST, "node " + node + " left the cluster");
  }

  /**
   * Whether {@code node} is in the cluster now. On an event bus that is not clustered every node
   * word is this JVM's (a device may be deployed under any word), so every one is.
   */
  public boolean isMember(String node) {
    return cluster == null || members.contains(node);
  }

  /** The nodes in the cluster now. */
  public Set<String> members() {
    return members;
  }

  /**
   * {@code request}, failed with CONTEXT_LOST as soon as {@code node} is seen to leave, or at once if
   * it is not a member; completes on the caller's context.
   */
  public <T> Future<T> guard(String node, Future<T> request) {
    if (cluster == null || node.equals(self)) {
      return request;
    }
    Promise<T> promise = VertxInternals.promise(vertx);
    Set<Promise<?>> set = waiting.computeIfAbsent(node, n -> ConcurrentHashMap.newKeySet());
    set.add(promise);
    if (!members.contains(node)) {
      set.remove(promise);
      promise.tryFail(nodeLost(node));
    }
    request.onComplete(ar -> {
      set.remove(promise);
      if (ar.succeeded()) {
        promise.tryComplete(ar.result());
      } else {
        promise.tryFail(ar.cause());
      }
    });
    return promise.future();
  }

  /**
   * Whether a message sent to {@code address} now leaves at once, in order with what the same context
   * sends elsewhere: this Vert.x has had an answer from it (a reply, or a failure its handler sent),
   * so its event bus has looked up who serves it, and still holds that (Vert.x's node selector;
   * {@link VertxInternals#clusterKnowsWhoServes}). Vert.x forgets an address when the cluster says
   * nobody serves it — its node's devices undeployed, then deployed again, or the node gone — and
   * so does this. Until then a message to it waits for the cluster manager's lookup, and one sent
   * later to an address already looked up can overtake it ({@link CallerOrder#behindFirstUse}).
   */
  boolean lookedUp(String address) {
    if (!lookedUp.contains(address)) {
      return false;
    }
    if (VertxInternals.clusterKnowsWhoServes(vertx, address)) {
      return true;
    }
    if (lookedUp.remove(address)) {
      forgets.incrementAndGet();
    }
    return false;
  }

  /** What {@link #answeredAt} needs from the moment a request is sent. */
  long forgets() {
    return forgets.get();
  }

  /**
   * A node answered a request at {@code address}, sent when {@link #forgets} read
   * {@code forgetsAtSend}: see {@link #lookedUp}. Ignored when an address was dropped since (the
   * answer may be from before Vert.x forgot this one; the next answer marks it).
   */
  void answeredAt(String address, long forgetsAtSend) {
    if (forgets.get() == forgetsAtSend) {
      lookedUp.add(address);
    }
  }

  /**
   * Calls {@code listener} with the node id of each node that leaves; returns what removes it. Off a
   * cluster no node leaves, and the listener is not kept.
   */
  public Runnable onLeft(Consumer<String> listener) {
    if (cluster == null) {
      return () -> { };
    }
    leftListeners.add(listener);
    return () -> leftListeners.remove(listener);
  }

  /**
   * {@link #onLeft} for as long as {@code consumer} is registered (the listener goes away at the
   * first departure after it was unregistered); {@code listener} runs on {@code context}. The
   * subscribers of device events use it to raise the LOST that a departed node cannot publish.
   */
  public void onLeftWhileRegistered(MessageConsumer<?> consumer, Context context,
                                    Consumer<String> listener) {
    Runnable[] stop = new Runnable[1];
    stop[0] = onLeft(node -> {
      if (consumer.isRegistered()) {
        context.runOnContext(v -> listener.accept(node));
      } else {
        stop[0].run();
      }
    });
  }

  /**
   * Why this node may not use the cluster's devices, or null: a cluster whose nodes declared that
   * its event bus uses TLS refuses a node whose event bus is plain (its messages would be dropped
   * by every TLS node without a word).
   */
  public String refusal() {
    return refusal;
  }

  /** Completes once the cluster's policy has been read the first time (whatever it says). */
  public Future<Void> policyRead() {
    return firstCheck;
  }

  /**
   * As {@link #checkPolicy}, but a read the cluster manager does not answer in time lets the caller go
   * on, as the first read does: for a listing, which reads the cluster's registry next anyway.
   */
  public Future<Void> checkPolicyUnlessUnanswered() {
    // Unanswered, the last verdict stands: a node already refused stays refused.
    return checkPolicy().recover(t -> !ClusterMaps.unanswered(t) ? Future.failedFuture(t)
      : refusal == null ? Future.succeededFuture() : Future.failedFuture(refused()));
  }

  /**
   * Reads the cluster's policy again; fails with FORBIDDEN if it refuses this node, with TIMEOUT if
   * the cluster manager does not answer ({@link ClusterMaps}).
   */
  public Future<Void> checkPolicy() {
    if (cluster == null) {
      return Future.succeededFuture();
    }
    return ClusterMaps.<String, Object, Object>call(vertx, Addresses.CLUSTER_MAP, m -> m.get(TLS_REQUIRED)).compose(v -> {
      boolean required = v instanceof Boolean && (Boolean) v;
      String was = refusal;
      refusal = required && !tls ? "the cluster requires event-bus TLS (declared by its device nodes) but this node's "
        + "event bus is plain: its messages would never be delivered; configure EventBusOptions.setSsl(true) with the "
        + "cluster's key and trust stores" : null;
      if (refusal != null && was == null) {
        LOG.log(System.Logger.Level.ERROR, "vertx-cuda refuses this node: " + refusal);
      }
      return refusal == null ? Future.succeededFuture() : Future.failedFuture(refused());
    });
  }

  /** The failure a refused node hears. */
  public CudaException refused() {
    return new CudaException(FailureCode.FORBIDDEN, refusal);
  }

  /**
   * Declares the cluster's policy from this node: when its event bus uses TLS, every node must.
   * A device node calls this before it registers.
   */
  public Future<Void> declarePolicy() {
    if (cluster == null || !tls) {
      return Future.succeededFuture();
    }
    return ClusterMaps.<String, Object, Void>call(vertx, Addresses.CLUSTER_MAP, m -> m.put(TLS_REQUIRED, Boolean.TRUE));
  }

  /** This node's policy as JSON (for a node's description). */
  public JsonObject describe() {
    return new JsonObject().put("node", self).put("clustered", cluster != null).put("eventBusTls", tls)
      .put("members", members.size()).put("refused", refusal);
  }
}
