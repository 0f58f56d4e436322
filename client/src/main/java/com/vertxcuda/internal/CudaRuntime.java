package com.vertxcuda.internal;

import com.vertxcuda.codec.CudaCodecs;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.net.SSLEngineOptions;
import io.vertx.core.shareddata.LocalMap;
import io.vertx.core.shareddata.Shareable;

/**
 * What vertx-cuda keeps per Vert.x instance, in one object: the devices served in this JVM
 * ({@link LocalRoutes}), the cluster watch ({@link ClusterWatch}), the connections to other nodes'
 * bulk side channels ({@link BulkChannels}), this node's own side channel ({@link BulkServer}, shared
 * by the devices that serve it) and whether the codecs are registered on its event bus. Every other
 * class reaches these through {@link #of}; none keeps its own table keyed by Vert.x.
 *
 * <p>It lives in the Vert.x instance's own local shared data (one entry, made on first use), so it
 * goes when its Vert.x is unreachable and no static table holds either. One close hook, added when
 * it is made, stops the cluster watch when the Vert.x closes; the entry stays, so what runs during
 * the close (devices that release the side channel) still finds the same runtime.
 */
public final class CudaRuntime implements Shareable {

  // Local shared data is per Vert.x instance; the name is one no application uses.
  private static final String MAP = "__vertx-cuda.runtime";
  private static final String KEY = "runtime";

  private final Vertx vertx;
  private final LocalRoutes routes = new LocalRoutes();
  private ClusterWatch watch;
  private BulkChannels channels;
  private BulkServer server;
  private int serverUsers;
  private boolean codecsRegistered;
  private boolean closed;

  private CudaRuntime(Vertx vertx) {
    this.vertx = vertx;
  }

  /** The runtime of {@code vertx}: made on first use, the same one from then on; any thread. */
  public static CudaRuntime of(Vertx vertx) {
    LocalMap<String, CudaRuntime> map = vertx.sharedData().getLocalMap(MAP);
    CudaRuntime runtime = map.get(KEY);
    if (runtime != null) {
      return runtime;
    }
    CudaRuntime made = new CudaRuntime(vertx);
    runtime = map.putIfAbsent(KEY, made);
    if (runtime != null) {
      return runtime; // another thread made it first
    }
    // The cluster watch must stop polling before the cluster manager goes.
    VertxInternals.addCloseHook(vertx, done -> {
      made.close();
      done.succeed();
    });
    return made;
  }

  /** The devices this Vert.x serves in this JVM, by address. */
  public LocalRoutes routes() {
    return routes;
  }

  /**
   * This Vert.x's cluster watch: made, and for a clustered Vert.x started, on first use. One made
   * after the Vert.x closed is not started.
   */
  public synchronized ClusterWatch clusterWatch() {
    if (watch == null) {
      watch = new ClusterWatch(vertx);
      if (!closed) {
        watch.start();
      }
    }
    return watch;
  }

  /** This Vert.x's connections to other nodes' side channels: made on first use. */
  synchronized BulkChannels bulkChannels() {
    if (channels == null) {
      channels = new BulkChannels(vertx, clusterWatch());
    }
    return channels;
  }

  /**
   * This Vert.x's side channel, started by its first user with {@code limits}: completes with the
   * address to advertise ({@code host:port}), or null where this Vert.x serves none (its event bus's
   * options cannot be read; a plain bus's server cannot listen: logged). Fails where the side channel
   * cannot be as protected as a TLS bus (settings it cannot carry over, a server that cannot listen):
   * the device's deploy fails with it. Each call is matched by one {@link #releaseBulkServer}.
   */
  public Future<String> acquireBulkServer(BulkServer.Limits limits) {
    BulkServer s;
    synchronized (this) {
      if (server == null) {
        server = new BulkServer(vertx, limits);
      }
      serverUsers++;
      s = server;
    }
    return s.address();
  }

  /** One user of the side channel less; the last closes it (a later user starts a new one). */
  public Future<Void> releaseBulkServer() {
    BulkServer s;
    synchronized (this) {
      if (server == null || --serverUsers > 0) {
        return Future.succeededFuture();
      }
      s = server;
      server = null;
    }
    return s.close();
  }

  /**
   * Connections this Vert.x's side channel has accepted since it started (one per connection a client
   * keeps, not one per transfer, refused ones included); 0 where it serves none.
   */
  public synchronized long bulkConnectionsAccepted() {
    return server == null ? 0 : server.connectionsAccepted();
  }

  /**
   * The TLS engine this Vert.x's side channel runs on, its server and its client alike: the one its
   * event bus names, else the toolkit's choice ({@link TlsEngines}); null for a plain bus or one
   * whose options cannot be read.
   */
  public SSLEngineOptions bulkTlsEngine() {
    EventBusOptions bus = VertxInternals.eventBusOptions(vertx);
    return bus == null ? null : BulkWire.engine(bus);
  }

  /** Registers every vertx-cuda codec on this Vert.x's event bus, the first time; later calls do nothing. */
  public synchronized void registerCodecs() {
    if (!codecsRegistered) {
      CudaCodecs.registerAll(vertx.eventBus());
      codecsRegistered = true;
    }
  }

  private void close() {
    ClusterWatch w;
    synchronized (this) {
      closed = true;
      w = watch;
    }
    if (w != null) {
      w.stop();
    }
  }
}
