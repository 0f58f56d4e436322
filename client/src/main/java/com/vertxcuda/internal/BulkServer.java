package com.vertxcuda.internal;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The bulk side channel of a GPU node: one TCP server per clustered Vert.x (the event bus's host, any
 * port, TLS when the bus has it: {@link BulkWire#serverOptions}), shared by every device it serves,
 * advertised in each device's {@code DeviceInfo.bulkAddress}, started by its first user (whose
 * {@link Limits} it keeps) and closed by its last ({@link CudaRuntime#acquireBulkServer}, which counts
 * them). Each connection carries transfers one after another
 * ({@link BulkConnection}; clients keep theirs open and reuse them, {@link BulkChannels}). It counts
 * its connections (in all and per peer address) and the bytes of uploads it holds, and refuses what
 * goes past its limits with one FAIL (QUEUE_FULL) before it closes the connection. All its work runs
 * on its own event loop; bytes are copied only on the copy threads.
 */
public final class BulkServer {

  /**
   * What one side channel admits: connections open at once, in all and from one peer address, and
   * bytes of uploads held at once (received, not yet in the device), in all.
   */
  public record Limits(int connections, int connectionsPerPeer, long heldBytes) {
    public Limits {
      if (connections <= 0 || connectionsPerPeer <= 0 || heldBytes <= 0) {
        throw new IllegalArgumentException("the bulk side channel's limits must be positive: " + connections + " connections, "
          + connectionsPerPeer + " per peer, " + heldBytes + " bytes held");
      }
    }
  }

  /** The longest a transfer may take once its token is proven, whatever its client asks: 10 minutes. */
  static final long MAX_STREAM_MILLIS = 600_000;

  /** Segments of a transfer on their way to or from the device at once. */
  static final int WINDOW = 4;
  /**
   * How long a connection may carry no proven transfer, in ms — a new one before its first header, a
   * kept one between transfers, one whose header is being read or its token checked — before it is
   * closed: longer than clients keep an idle one ({@link BulkChannels#IDLE_MILLIS}), so they close first.
   */
  static final long IDLE_MILLIS = 30_000;
  /**
   * How long a connection may send nothing, in ms, while the node waits for its bytes (a header begun,
   * an upload's payload), before it is answered TIMEOUT and closed.
   */
  static final long READ_IDLE_MILLIS = 10_000;

  private static final System.Logger LOG = System.getLogger(BulkServer.class.getName());

  private final Future<String> address;
  private final Limits limits;
  private final AtomicLong accepted = new AtomicLong();
  private volatile NetServer server;
  // Counted under this object's lock.
  private int open;
  private final Map<String, Integer> openPerPeer = new HashMap<>();
  private long held;

  /** Starts listening; {@link #address} says where, or why not. */
  BulkServer(Vertx vertx, Limits limits) {
    this.limits = limits;
    EventBusOptions bus = VertxInternals.eventBusOptions(vertx);
    if (bus == null) {
      address = unserved(new CudaException(FailureCode.UNSUPPORTED,
        "the bulk channel needs a clustered event bus whose options can be read"));
      return;
    }
    String unlike = BulkWire.tlsMismatch(bus);
    if (unlike != null) {
      address = Future.failedFuture(new CudaException(FailureCode.UNSUPPORTED, unlike));
      return;
    }
    Promise<String> listening = Promise.promise();
    // A TLS bus's side channel serves or the deploy fails: remote transfers past 1 MiB need it, and
    // nothing else carries them as protected as the bus.
    address = listening.future().recover(t -> bus.isSsl()
      ? Future.failedFuture(new CudaException(FailureCode.UNSUPPORTED, "the bulk side channel of a TLS event bus cannot listen: "
        + t.getMessage()))
      : unserved(t));
    // On a context of its own: the server outlives the device that asked for it first.
    Context context = VertxInternals.newEventLoopContext(vertx);
    context.runOnContext(v -> {
      try {
        server = vertx.createNetServer(BulkWire.serverOptions(vertx, bus)).connectHandler(s -> connected(vertx, s));
        server.listen().map(s -> BulkWire.advertisedHost(vertx, bus) + ":" + s.actualPort()).onComplete(listening);
      } catch (RuntimeException e) {
        listening.fail(e);
      }
    });
  }

  // A plain node that cannot serve a side channel still serves everything else; its remote clients
  // hear UNSUPPORTED for transfers past 1 MiB.
  private static Future<String> unserved(Throwable t) {
    LOG.log(System.Logger.Level.WARNING, "no bulk side channel: " + t.getMessage());
    return Future.succeededFuture();
  }

  private void connected(Vertx vertx, NetSocket s) {
    accepted.incrementAndGet();
    String peer = s.remoteAddress() == null ? "" : s.remoteAddress().hostAddress();
    String refused = admit(peer);
    if (refused != null) {
      BulkConnection.refuse(vertx, s, new CudaException(FailureCode.QUEUE_FULL, refused));
      return;
    }
    new BulkConnection(vertx, s, this, () -> closed(peer)).start();
  }

  // Counts a new connection from {@code peer}; why not, past a limit.
  private synchronized String admit(String peer) {
    int fromPeer = openPerPeer.getOrDefault(peer, 0);
    if (open >= limits.connections()) {
      return "the bulk side channel serves " + limits.connections() + " connections at once";
    }
    if (fromPeer >= limits.connectionsPerPeer()) {
      return "the bulk side channel serves " + limits.connectionsPerPeer() + " connections from one address at once";
    }
    open++;
    openPerPeer.put(peer, fromPeer + 1);
    return null;
  }

  private synchronized void closed(String peer) {
    open--;
    openPerPeer.computeIfPresent(peer, (p, n) -> n > 1 ? n - 1 : null);
  }

  /** Takes {@code bytes} of the budget of bytes held; false where it would go past it. */
  synchronized boolean reserve(long bytes) {
    if (bytes > limits.heldBytes() - held) {
      return false;
    }
    held += bytes;
    return true;
  }

  /** Gives back what {@link #reserve} took. */
  synchronized void unreserve(long bytes) {
    held -= bytes;
  }

  /**
   * The address to advertise ({@code host:port}), or null where it serves none; failed where it
   * cannot be as protected as a TLS bus ({@link CudaRuntime#acquireBulkServer}).
   */
  Future<String> address() {
    return address;
  }

  /** Connections accepted since it started, refused ones included. */
  long connectionsAccepted() {
    return accepted.get();
  }

  /** Closes the server once it has listened (or failed to). */
  Future<Void> close() {
    return address.transform(ar -> server == null ? Future.<Void>succeededFuture() : server.close());
  }
}
