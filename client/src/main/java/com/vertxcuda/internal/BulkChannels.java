package com.vertxcuda.internal;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;

import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * This Vert.x's connections to the bulk side channels of other nodes ({@link BulkServer}): per node,
 * at most {@link #MAX_CONNECTIONS}, kept open and reused transfer after transfer (a TCP connect and a
 * TLS handshake per connection, not per transfer), each carrying one transfer at a time
 * ({@link BulkWire}). A transfer that finds them all busy waits for the first to come back. A
 * connection goes back to its pool only after a transfer answered DONE; one that failed, closed, sent
 * bytes nothing asked for or carried a FAIL is closed, never reused. An idle connection is closed after
 * {@link #IDLE_MILLIS}, and a node's connections when it leaves the cluster.
 *
 * <p>Each node's pool ({@link Node}) lives on an event-loop context of its own: its connections are
 * made there, so their events arrive there, and the transfers to that node run there. It knows where
 * the node's side channel listens for as long as it has a connection there (an address learnt from a
 * device's description, {@code DeviceInfo.bulkAddress}); with none, the next transfer asks again.
 * One per Vert.x, held by its {@link CudaRuntime}; its client has the event bus's TLS settings
 * ({@link BulkWire#clientOptions}).
 */
final class BulkChannels {

  /** Connections to one node at most. */
  static final int MAX_CONNECTIONS = 4;
  /** How long an idle connection is kept, in ms (the node closes one after {@link BulkServer#IDLE_MILLIS}). */
  static final long IDLE_MILLIS = 10_000;

  private final Vertx vertx;
  private final Map<String, Node> nodes = new ConcurrentHashMap<>();
  private Future<NetClient> client;

  /** Connections of {@code vertx}; each node's are dropped when {@code watch} sees it leave. */
  BulkChannels(Vertx vertx, ClusterWatch watch) {
    this.vertx = vertx;
    watch.onLeft(left -> {
      Node gone = nodes.remove(left);
      if (gone != null) {
        gone.context.runOnContext(v -> gone.drop());
      }
    });
  }

  /** The pool of {@code node}. */
  Node node(String node) {
    return nodes.computeIfAbsent(node, Node::new);
  }

  // This Vert.x's side-channel client, made once on a context of its own: one made on a verticle's
  // context would close when that verticle is undeployed.
  private synchronized Future<NetClient> client() {
    if (client == null) {
      EventBusOptions bus = VertxInternals.eventBusOptions(vertx);
      if (bus == null) {
        return Future.failedFuture(new CudaException(FailureCode.UNSUPPORTED,
          "the bulk channel needs a clustered event bus whose options can be read"));
      }
      String unlike = BulkWire.tlsMismatch(bus);
      if (unlike != null) {
        return Future.failedFuture(new CudaException(FailureCode.UNSUPPORTED, unlike));
      }
      Promise<NetClient> made = Promise.promise();
      VertxInternals.newEventLoopContext(vertx).runOnContext(v -> made.complete(vertx.createNetClient(BulkWire.clientOptions(bus))));
      client = made.future();
    }
    return client;
  }

  /** One node's connections; every method but {@link #address} on {@link #context} only. */
  final class Node {
    private final String id;
    /** Where the node's connections live and its transfers run. */
    final Context context;
    /** The node's side channel ({@code host:port}) while a connection there is open or awaited; else null. */
    private String address;
    /** Idle connections, the most recently used last. */
    private final ArrayDeque<Channel> idle = new ArrayDeque<>();
    /** Transfers waiting for a connection, in the order they asked. */
    private final ArrayDeque<Promise<Channel>> waiting = new ArrayDeque<>();
    /** Connections open or being made. */
    private int open;
    private int connecting;
    private boolean dropped;

    private Node(String id) {
      this.id = id;
      this.context = VertxInternals.newEventLoopContext(vertx);
    }

    /** The node's side channel while the pool has a connection there; null when it must be asked. */
    String address() {
      return address;
    }

    /**
     * The node's devices name {@code bulkAddress} as its side channel: connections to another
     * address go. Fails UNSUPPORTED where the node advertises no usable channel.
     */
    Future<Void> learn(String bulkAddress) {
      if (port(bulkAddress) <= 0) {
        return Future.failedFuture(new CudaException(FailureCode.UNSUPPORTED, "node " + id
          + " serves no bulk channel" + (bulkAddress == null ? "" : " at a usable address: " + bulkAddress)));
      }
      if (!bulkAddress.equals(address)) {
        for (Channel c : idle.toArray(new Channel[0])) {
          c.discard();
        }
        address = bulkAddress;
      }
      return Future.succeededFuture();
    }

    /**
     * A connection for one transfer: an idle one, a new one while fewer than {@link #MAX_CONNECTIONS}
     * are open, or else the first to come back. Completes on {@link #context}; CONTEXT_LOST where the
     * node cannot be reached or has left. Hand it back with {@link #release}.
     */
    Future<Channel> acquire() {
      if (dropped || address == null) {
        return Future.failedFuture(new CudaException(FailureCode.CONTEXT_LOST, dropped ? "node " + id + " left the cluster"
          : "the bulk channel of node " + id + " is not known"));
      }
      Channel c = idle.pollLast();
      if (c != null) {
        c.lease();
        return Future.succeededFuture(c);
      }
      Promise<Channel> p = Promise.promise();
      waiting.add(p);
      connectForWaiters();
      return p.future();
    }

    /**
     * A transfer is done with {@code c}: back to the pool when {@code reusable} (its transfer answered
     * DONE) and still open, else closed. The next waiting transfer takes it.
     */
    void release(Channel c, boolean reusable) {
      c.user(null, null);
      if (!reusable || c.closed || dropped || !c.address.equals(address)) {
        c.discard();
        return;
      }
      c.socket.resume();
      Promise<Channel> next = waiting.poll();
      if (next != null) {
        next.complete(c);
        return;
      }
      idle.addLast(c);
      c.idleTimer = vertx.setTimer(IDLE_MILLIS, id -> {
        if (idle.remove(c)) {
          c.discard();
        }
      });
    }

    // While transfers wait and fewer than MAX connections are open, one more is made for each, from
    // this context (so its events arrive here).
    private void connectForWaiters() {
      String at = address;
      while (!dropped && at != null && waiting.size() > connecting && open < MAX_CONNECTIONS) {
        open++;
        connecting++;
        client().onComplete(made -> context.runOnContext(v -> {
          if (made.failed()) {
            connected(at, Future.failedFuture(made.cause()));
          } else {
            made.result().connect(port(at), at.substring(0, at.lastIndexOf(':'))).onComplete(ar -> connected(at, ar));
          }
        }));
      }
    }

    private void connected(String at, AsyncResult<NetSocket> ar) {
      connecting--;
      if (ar.failed()) {
        open--;
        Promise<Channel> first = waiting.poll();
        if (first != null) {
          first.fail(new CudaException(FailureCode.CONTEXT_LOST, "the bulk channel of node " + id + " at "
            + at + " cannot be reached: " + ar.cause().getMessage()));
        }
        forgetAddressIfUnused();
        connectForWaiters();
        return;
      }
      Channel c = new Channel(this, ar.result(), at);
      if (dropped || !at.equals(address)) {
        c.discard(); // the node left, or its channel moved meanwhile: those who wait get a new one
        return;
      }
      Promise<Channel> first = waiting.poll();
      if (first != null) {
        c.lease();
        first.complete(c);
      } else {
        release(c, true);
      }
    }

    // {@code c} is closed: it counts no more, and the next waiting transfer may have a new one.
    private void forget(Channel c) {
      if (c.forgotten) {
        return;
      }
      c.forgotten = true;
      open--;
      idle.remove(c);
      vertx.cancelTimer(c.idleTimer);
      forgetAddressIfUnused();
      connectForWaiters();
    }

    // With no connection there and nobody waiting for one, the address is asked again next time: the
    // node's side channel may have moved (its last device undeployed, a new one deployed).
    private void forgetAddressIfUnused() {
      if (open == 0 && waiting.isEmpty()) {
        address = null;
      }
    }

    // The node left: its idle connections close, and nothing is made there any more (the transfers
    // on its busy ones fail on their own, watching the same leave).
    private void drop() {
      dropped = true;
      for (Channel c : idle.toArray(new Channel[0])) {
        c.discard();
      }
      Promise<Channel> p;
      while ((p = waiting.poll()) != null) {
        p.fail(new CudaException(FailureCode.CONTEXT_LOST, "node " + id + " left the cluster"));
      }
    }
  }

  /** One connection to a node's side channel; its events go to the transfer that holds it. On its node's context. */
  final class Channel {
    private final Node node;
    final NetSocket socket;
    /**
     * The direct buffers of an upload's ring ({@link BulkTransfer#CHUNK} bytes each), kept for the
     * connection's next upload: fresh direct memory is zeroed and page-faulted, and is freed only by a
     * garbage collection. A connection that is closed takes them with it.
     */
    final ArrayDeque<Buffer> ring = new ArrayDeque<>();
    private final String address;
    private Handler<Buffer> data;
    private Handler<Throwable> cut;
    private long idleTimer = -1;
    private boolean closed;
    private boolean forgotten;

    private Channel(Node node, NetSocket socket, String address) {
      this.node = node;
      this.socket = socket;
      this.address = address;
      socket.handler(b -> {
        if (data != null) {
          data.handle(b);
        } else {
          discard(); // bytes nobody asked for: the stream is not where the pool thinks it is
        }
      });
      socket.closeHandler(v -> {
        closed = true;
        Handler<Throwable> c = cut;
        node.forget(this);
        if (c != null) {
          c.handle(null);
        }
      });
      socket.exceptionHandler(t -> {
        Handler<Throwable> c = cut;
        if (c != null) {
          c.handle(t);
        } else {
          discard();
        }
      });
    }

    /**
     * The transfer that holds it from now on: {@code data} hears what arrives, {@code cut} that the
     * connection failed (its cause) or closed (null).
     */
    void user(Handler<Buffer> data, Handler<Throwable> cut) {
      this.data = data;
      this.cut = cut;
    }

    private void lease() {
      vertx.cancelTimer(idleTimer);
    }

    private void discard() {
      socket.close();
      node.forget(this);
    }
  }

  private static int port(String address) {
    int colon = address == null ? -1 : address.lastIndexOf(':');
    try {
      return colon <= 0 ? -1 : Integer.parseInt(address.substring(colon + 1));
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
