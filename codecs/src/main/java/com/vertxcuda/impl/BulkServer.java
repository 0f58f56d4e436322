package com.vertxcuda.impl;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.net.NetServer;

import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The bulk side channel of a GPU node: one TCP server per clustered Vert.x (the event bus's host, any
 * port, TLS when the bus has it: {@link BulkWire#serverOptions}), shared by every device it serves,
 * advertised in each device's {@code DeviceInfo.bulkAddress}, started by its first user and closed by
 * its last. Each connection carries transfers one after another ({@link BulkConnection}; clients keep
 * theirs open and reuse them, {@link BulkChannels}). All its work runs on its own event loop; bytes are
 * copied only on the copy threads.
 */
public final class BulkServer {

  /** The longest a transfer may take, whatever its client asks: 10 minutes. */
  static final long MAX_STREAM_MILLIS = 600_000;

  /** Segments of a transfer on their way to or from the device at once. */
  static final int WINDOW = 4;
  /**
   * How long a connection may carry no transfer, in ms — a new one before its first header, a kept one
   * between transfers, one that carried a FAIL before its client closes it — before it is closed:
   * longer than clients keep an idle one ({@link BulkChannels#IDLE_MILLIS}), so they close first.
   */
  static final long IDLE_MILLIS = 30_000;

  private static final Map<Vertx, BulkServer> SERVERS = new WeakHashMap<>();

  private final Future<String> address;
  private final AtomicLong accepted = new AtomicLong();
  private NetServer server;
  private int users;

  private BulkServer(Vertx vertx) {
    EventBusOptions bus = VertxInternals.eventBusOptions(vertx);
    if (bus == null) {
      address = Future.failedFuture(new CudaException(FailureCode.UNSUPPORTED,
        "the bulk channel needs a clustered event bus whose options can be read"));
      return;
    }
    Promise<String> listening = Promise.promise();
    address = listening.future();
    // On a context of its own: the server outlives the device that asked for it first.
    Context context = VertxInternals.newEventLoopContext(vertx);
    context.runOnContext(v -> {
      server = vertx.createNetServer(BulkWire.serverOptions(vertx, bus)).connectHandler(s -> {
        accepted.incrementAndGet();
        new BulkConnection(vertx, s).start();
      });
      server.listen().map(s -> BulkWire.advertisedHost(vertx, bus) + ":" + s.actualPort()).onComplete(listening);
    });
  }

  /**
   * This Vert.x's side channel, started by its first user: completes with the address to advertise
   * ({@code host:port}). Each call is matched by one {@link #release}.
   */
  public static Future<String> acquire(Vertx vertx) {
    BulkServer s;
    synchronized (SERVERS) {
      s = SERVERS.computeIfAbsent(vertx, BulkServer::new);
      s.users++;
    }
    return s.address;
  }

  /**
   * Connections this Vert.x's side channel has accepted since it started (one per connection a client
   * keeps, not one per transfer); 0 where it serves none.
   */
  public static long connectionsAccepted(Vertx vertx) {
    synchronized (SERVERS) {
      BulkServer s = SERVERS.get(vertx);
      return s == null ? 0 : s.accepted.get();
    }
  }

  /** One user less; the last closes the server. */
  public static Future<Void> release(Vertx vertx) {
    BulkServer s;
    synchronized (SERVERS) {
      s = SERVERS.get(vertx);
      if (s == null || --s.users > 0) {
        return Future.succeededFuture();
      }
      SERVERS.remove(vertx);
    }
    return s.address.transform(ar -> s.server == null ? Future.<Void>succeededFuture() : s.server.close());
  }
}
