package com.vertxcuda.impl;

import com.vertxcuda.Addresses;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;

/** The node word of this Vert.x instance in the address scheme. */
public final class Nodes {

  private Nodes() {
  }

  /** The cluster node id when clustered, otherwise {@link Addresses#LOCAL_NODE}. */
  public static String self(Vertx vertx) {
    if (vertx.isClustered() && vertx instanceof VertxInternal) {
      VertxInternal internal = (VertxInternal) vertx;
      if (internal.clusterManager() != null && internal.clusterManager().getNodeId() != null) {
        return internal.clusterManager().getNodeId();
      }
    }
    return Addresses.LOCAL_NODE;
  }
}
