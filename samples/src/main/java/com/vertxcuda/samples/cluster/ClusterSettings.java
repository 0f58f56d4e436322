package com.vertxcuda.samples.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.net.PfxOptions;
import io.vertx.spi.cluster.hazelcast.ConfigUtil;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.List;

/**
 * How a node joins the cluster: Hazelcast on one interface with a fixed member list (multicast,
 * auto-detection and phone-home off), the event bus on the same host, and optionally TLS for the
 * event bus (PKCS#12 key and trust stores). Shared by the node and client commands.
 */
public final class ClusterSettings {

  @Option(names = "--cluster", description = "cluster name (members must use the same one; default ${DEFAULT-VALUE})")
  String name = "vertx-cuda";

  @Option(names = "--host", description = "interface Hazelcast and the event bus bind to (default ${DEFAULT-VALUE})")
  String host = "127.0.0.1";

  @Option(names = "--members", split = ",", description = "hosts to join (TCP/IP join; default: --host)")
  List<String> members = new ArrayList<>();

  @Option(names = "--tls-keystore", description = "PKCS#12 key store: the event bus runs over TLS with client authentication")
  String keyStore;

  @Option(names = "--tls-truststore", description = "PKCS#12 trust store (default: the key store)")
  String trustStore;

  @Option(names = "--tls-password", description = "password of the stores", interactive = false)
  String password = "";

  /** A clustered Vert.x as configured. */
  public Future<Vertx> start() {
    return start(null);
  }

  /**
   * A clustered Vert.x as configured, whose own meters (event bus, HTTP, pools: Vert.x's Micrometer
   * metrics) go to {@code metrics} when it is not null.
   */
  public Future<Vertx> start(io.micrometer.core.instrument.MeterRegistry metrics) {
    System.setProperty("hazelcast.phone.home.enabled", "false");
    VertxOptions options = new VertxOptions();
    EventBusOptions bus = options.getEventBusOptions().setHost(host).setClusterPublicHost(host).setPort(0);
    if (keyStore != null) {
      PfxOptions key = new PfxOptions().setPath(keyStore).setPassword(password);
      PfxOptions trust = new PfxOptions().setPath(trustStore != null ? trustStore : keyStore).setPassword(password);
      bus.setSsl(true).setKeyCertOptions(key).setTrustOptions(trust)
        .setClientAuth(io.vertx.core.http.ClientAuth.REQUIRED);
    }
    var builder = Vertx.builder();
    if (metrics != null) {
      options.setMetricsOptions(new io.vertx.micrometer.MicrometerMetricsOptions().setEnabled(true));
      builder.withMetrics(new io.vertx.micrometer.MicrometerMetricsFactory(metrics));
    }
    return builder.with(options).withClusterManager(new HazelcastClusterManager(hazelcast())).buildClustered();
  }

  Config hazelcast() {
    Config config = ConfigUtil.loadConfig();
    config.setClusterName(name);
    config.setProperty("hazelcast.phone.home.enabled", "false");
    config.setProperty("hazelcast.logging.type", "jdk");
    config.setProperty("hazelcast.wait.seconds.before.join", "0");
    config.setProperty("hazelcast.max.wait.seconds.before.join", "0");
    NetworkConfig network = config.getNetworkConfig();
    network.setPort(5701).setPortAutoIncrement(true).setPortCount(50);
    network.getInterfaces().setEnabled(true).addInterface(host);
    JoinConfig join = network.getJoin();
    join.getMulticastConfig().setEnabled(false);
    join.getAutoDetectionConfig().setEnabled(false);
    join.getAwsConfig().setEnabled(false);
    join.getTcpIpConfig().setEnabled(true);
    (members.isEmpty() ? List.of(host) : members).forEach(m -> join.getTcpIpConfig().addMember(m));
    return config;
  }

  /** The same settings for another process, as command-line arguments. */
  public List<String> arguments() {
    List<String> args = new ArrayList<>(List.of("--cluster", name, "--host", host));
    if (!members.isEmpty()) {
      args.add("--members");
      args.add(String.join(",", members));
    }
    if (keyStore != null) {
      args.addAll(List.of("--tls-keystore", keyStore, "--tls-password", password));
      if (trustStore != null) {
        args.addAll(List.of("--tls-truststore", trustStore));
      }
    }
    return args;
  }
}
