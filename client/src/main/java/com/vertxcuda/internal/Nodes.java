package com.vertxcuda.internal;

import com.vertxcuda.Addresses;
import io.vertx.core.Vertx;
import io.vertx.core.spi.cluster.ClusterManager;

/**
 * The node word of this Vert.x instance in the address scheme. (What the event bus knows about a
 * message's sending node is read in {@link VertxInternals#sender}.)
 */
public final class Nodes {

  private Nodes() {
  }

  /** The cluster node id when clustered, otherwise {@link Addresses#LOCAL_NODE}. */
  public static String self(Vertx vertx) {
    ClusterManager cluster = VertxInternals.clusterManager(vertx);
    if (cluster != null && cluster.getNodeId() != null) {
      return cluster.getNodeId();
    }
    return Addresses.LOCAL_NODE;
  }
}
