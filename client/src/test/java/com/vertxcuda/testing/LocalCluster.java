package com.vertxcuda.testing;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.spi.cluster.hazelcast.ConfigUtil;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;

/**
 * Clustered Vert.x nodes that talk only over 127.0.0.1: Hazelcast with multicast and auto-detection
 * off, TCP/IP join listing 127.0.0.1, phone-home off, the event bus bound to loopback.
 */
public final class LocalCluster {

  private LocalCluster() {
  }

  public static Config hazelcastConfig(String clusterName) {
    Config config = ConfigUtil.loadConfig();
    config.setClusterName(clusterName);
    config.setProperty("hazelcast.phone.home.enabled", "false");
    config.setProperty("hazelcast.logging.type", "jdk");
    config.setProperty("hazelcast.wait.seconds.before.join", "0");
    config.setProperty("hazelcast.max.wait.seconds.before.join", "0");
    // A joining member tries every port of the range, not the first three: with other clusters on the
    // first ports (other tests, a test JVM beside this one) it still finds its own.
    config.setProperty("hazelcast.tcp.join.port.try.count", "50");
    NetworkConfig network = config.getNetworkConfig();
    network.setPort(5701).setPortAutoIncrement(true).setPortCount(50);
    network.getInterfaces().setEnabled(true).addInterface("127.0.0.1");
    JoinConfig join = network.getJoin();
    join.getMulticastConfig().setEnabled(false);
    join.getAutoDetectionConfig().setEnabled(false);
    join.getAwsConfig().setEnabled(false);
    join.getTcpIpConfig().setEnabled(true).addMember("127.0.0.1");
    return config;
  }

  /** Starts one clustered node of cluster {@code clusterName}. */
  public static Future<Vertx> node(String clusterName) {
    return node(clusterName, HazelcastClusterManager::new);
  }

  /**
   * Starts one clustered node of cluster {@code clusterName} whose cluster manager {@code manager}
   * makes from the loopback-only Hazelcast configuration (a subclass that misbehaves, say).
   */
  public static Future<Vertx> node(String clusterName, java.util.function.Function<Config, HazelcastClusterManager> manager) {
    System.setProperty("hazelcast.phone.home.enabled", "false");
    VertxOptions options = new VertxOptions();
    options.getEventBusOptions().setHost("127.0.0.1").setClusterPublicHost("127.0.0.1").setPort(0);
    return Vertx.builder().with(options)
      .withClusterManager(manager.apply(hazelcastConfig(clusterName)))
      .buildClustered();
  }

  /** Closes every node started (null where one never was), all at once; completes when all have closed. */
  public static Future<Void> close(Vertx... nodes) {
    java.util.List<Future<Void>> closing = new java.util.ArrayList<>();
    for (Vertx node : nodes) {
      if (node != null) {
        closing.add(node.close());
      }
    }
    return Future.join(closing).mapEmpty();
  }
}
