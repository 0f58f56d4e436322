package com.vertxcuda.device;

import com.hazelcast.config.Config;
import com.vertxcuda.testing.LocalCluster;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;

import java.util.function.Function;

/**
 * Two nodes of one loopback cluster, as the two-node tests start them: a GPU node with the test
 * device deployed, then a client node with none. Whatever was started is closed by {@link #close},
 * also when the start failed half way.
 */
final class TwoNodes {

  /** The node with the device (null until started). */
  Vertx gpu;
  /** The node without one (null until started). */
  Vertx client;

  /** Starts the GPU node and deploys the test device on it, then the client node. */
  Future<TwoNodes> start(String cluster) {
    return start(cluster, HazelcastClusterManager::new);
  }

  /** As {@link #start(String)}, the client node's cluster manager made by {@code clientManager}. */
  Future<TwoNodes> start(String cluster, Function<Config, HazelcastClusterManager> clientManager) {
    return start(cluster, clientManager, TestDevices.options());
  }

  /** As {@link #start(String)}, the device deployed with {@code options}. */
  Future<TwoNodes> start(String cluster, DeviceOptions options) {
    return start(cluster, HazelcastClusterManager::new, options);
  }

  private Future<TwoNodes> start(String cluster, Function<Config, HazelcastClusterManager> clientManager,
                                 DeviceOptions options) {
    return LocalCluster.node(cluster)
      .compose(g -> {
        gpu = g;
        return TestDevices.deploy(g, options);
      })
      .compose(id -> LocalCluster.node(cluster, clientManager))
      .map(c -> {
        client = c;
        return this;
      });
  }

  /** Closes both nodes, those started. */
  Future<Void> close() {
    return LocalCluster.close(gpu, client);
  }
}
