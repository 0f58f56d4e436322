package com.vertxcuda.samples.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import com.vertxcuda.internal.TlsEngines;
import io.netty.handler.ssl.OpenSsl;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.JdkSSLEngineOptions;
import io.vertx.core.net.OpenSSLEngineOptions;
import io.vertx.core.net.PfxOptions;
import io.vertx.core.net.SSLEngineOptions;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.spi.cluster.hazelcast.ConfigUtil;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.util.Locale;
import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.List;

/**
 * How a node joins the cluster: the cluster manager (Hazelcast on one interface with a fixed member
 * list, multicast, auto-detection and phone-home off; or Infinispan over an encrypted, authenticated
 * JGroups stack on one interface with a fixed member list, {@link EncryptedInfinispan}), the event
 * bus on the same host, and optionally TLS for the event bus (PKCS#12 key and trust stores; OpenSSL
 * where it loads, else the JDK's engine, unless {@code --tls-engine} names one). Shared
 * by the node, client and devices commands, and by the bench module's cluster bench and scale simulation.
 */
public final class ClusterSettings {

  /** The cluster managers a node can join with. */
  public enum Manager { HAZELCAST, INFINISPAN }

  /**
   * The TLS engines the event bus (and so the bulk side channel) can run on: {@code AUTO} is the
   * toolkit's choice ({@link TlsEngines#preferred}: OpenSSL where netty-tcnative loads, else the JDK's).
   */
  public enum TlsEngine { AUTO, JDK, OPENSSL }

  @Option(names = "--cluster-manager", description = "hazelcast, or infinispan (JGroups encrypted and authenticated:"
    + " needs --jgroups-keystore and --jgroups-secret; default ${DEFAULT-VALUE})")
  Manager manager = Manager.HAZELCAST;

  @Option(names = "--jgroups-keystore", description = "infinispan: PKCS#12 store with the AES key 'cluster-key' (SYM_ENCRYPT)"
    + " and the RSA key pair 'cluster-auth' (AUTH), the same file on every member")
  String jgroupsKeyStore;

  @Option(names = "--jgroups-password", description = "infinispan: password of that store and its keys")
  String jgroupsPassword = "";

  @Option(names = "--jgroups-secret", description = "infinispan: the secret a member proves to join (AUTH);"
    + " put it in an @file to keep it off the command line")
  String jgroupsSecret;

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

  @Option(names = "--tls-engine", description = "TLS engine: auto (OpenSSL where netty-tcnative loads, else the JDK's),"
    + " jdk or openssl (default ${DEFAULT-VALUE})")
  TlsEngine tlsEngine = TlsEngine.AUTO;

  /** The cluster manager a node joins with. */
  public Manager manager() {
    return manager;
  }

  /** Names the cluster (members must use the same one). */
  public ClusterSettings setName(String name) {
    this.name = name;
    return this;
  }

  /**
   * Runs the event bus over TLS with client authentication: {@code keyStore} (PKCS#12) holds this
   * member's key and, unless a trust store is set, the certificates it trusts; {@code password} opens both.
   */
  public ClusterSettings setTls(String keyStore, String password) {
    this.keyStore = keyStore;
    this.password = password;
    return this;
  }

  /** Runs TLS on {@code engine} ({@link TlsEngine#AUTO} unless set). */
  public ClusterSettings setTlsEngine(TlsEngine engine) {
    this.tlsEngine = engine;
    return this;
  }

  /** Whether the event bus runs over TLS. */
  public boolean tls() {
    return keyStore != null;
  }

  /** A clustered Vert.x as configured. */
  public Future<Vertx> start() {
    return start(null);
  }

  /**
   * A clustered Vert.x as configured, whose own meters (event bus, HTTP, pools: Vert.x's Micrometer
   * metrics) go to {@code metrics} when it is not null.
   */
  public Future<Vertx> start(MeterRegistry metrics) {
    ClusterManager clusterManager;
    SSLEngineOptions engine;
    try {
      clusterManager = clusterManager();
      engine = keyStore == null ? null : sslEngine();
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
    System.setProperty("hazelcast.phone.home.enabled", "false");
    VertxOptions options = new VertxOptions();
    EventBusOptions bus = options.getEventBusOptions().setHost(host).setClusterPublicHost(host).setPort(0);
    if (keyStore != null) {
      PfxOptions key = new PfxOptions().setPath(keyStore).setPassword(password);
      PfxOptions trust = new PfxOptions().setPath(trustStore != null ? trustStore : keyStore).setPassword(password);
      bus.setSsl(true).setKeyCertOptions(key).setTrustOptions(trust).setSslEngineOptions(engine)
        .setClientAuth(ClientAuth.REQUIRED);
    }
    var builder = Vertx.builder();
    if (metrics != null) {
      options.setMetricsOptions(new MicrometerMetricsOptions().setEnabled(true));
      builder.withMetrics(new MicrometerMetricsFactory(metrics));
    }
    return builder.with(options).withClusterManager(clusterManager).buildClustered();
  }

  /** The TLS engine as configured; refuses OpenSSL where it does not load, saying why. */
  SSLEngineOptions sslEngine() {
    switch (tlsEngine) {
      case JDK:
        return TlsEngines.of(new JdkSSLEngineOptions());
      case OPENSSL:
        if (!OpenSSLEngineOptions.isAvailable()) {
          throw new IllegalArgumentException("--tls-engine openssl: OpenSSL does not load (netty-tcnative-boringssl-static"
            + " for this platform on the class path?): " + OpenSsl.unavailabilityCause());
        }
        return TlsEngines.of(new OpenSSLEngineOptions());
      default:
        return TlsEngines.preferred();
    }
  }

  /** The cluster manager as configured; refuses Infinispan without its key store and secret. */
  ClusterManager clusterManager() {
    if (manager == Manager.HAZELCAST) {
      return new HazelcastClusterManager(hazelcast());
    }
    if (jgroupsKeyStore == null || jgroupsSecret == null || jgroupsSecret.isEmpty()) {
      throw new IllegalArgumentException("--cluster-manager infinispan needs --jgroups-keystore and --jgroups-secret:"
        + " its membership is encrypted and authenticated or not used");
    }
    return EncryptedInfinispan.create(name, host, members, jgroupsKeyStore, jgroupsPassword, jgroupsSecret);
  }

  Config hazelcast() {
    Config config = ConfigUtil.loadConfig();
    config.setClusterName(name);
    config.setProperty("hazelcast.phone.home.enabled", "false");
    config.setProperty("hazelcast.logging.type", "jdk");
    config.setProperty("hazelcast.wait.seconds.before.join", "0");
    config.setProperty("hazelcast.max.wait.seconds.before.join", "0");
    if (members.isEmpty()) {
      // Members on this host only: a joining member tries every port of the range, not the first
      // three, so it finds its cluster whatever other clusters hold the first ports.
      config.setProperty("hazelcast.tcp.join.port.try.count", "50");
    }
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
    List<String> args = new ArrayList<>(List.of("--cluster", name, "--host", host,
      "--cluster-manager", manager.name().toLowerCase(Locale.ROOT)));
    if (jgroupsKeyStore != null) {
      args.addAll(List.of("--jgroups-keystore", jgroupsKeyStore, "--jgroups-password", jgroupsPassword));
    }
    if (jgroupsSecret != null) {
      args.addAll(List.of("--jgroups-secret", jgroupsSecret));
    }
    if (!members.isEmpty()) {
      args.add("--members");
      args.add(String.join(",", members));
    }
    if (keyStore != null) {
      args.addAll(List.of("--tls-keystore", keyStore, "--tls-password", password,
        "--tls-engine", tlsEngine.name().toLowerCase(Locale.ROOT)));
      if (trustStore != null) {
        args.addAll(List.of("--tls-truststore", trustStore));
      }
    }
    return args;
  }
}
