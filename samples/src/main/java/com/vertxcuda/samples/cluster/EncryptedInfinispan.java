package com.vertxcuda.samples.cluster;

import io.vertx.core.Completable;
import io.vertx.core.Vertx;
import io.vertx.ext.cluster.infinispan.InfinispanClusterManager;
import org.infinispan.configuration.global.ShutdownHookBehavior;
import org.infinispan.configuration.parsing.ConfigurationBuilderHolder;
import org.infinispan.configuration.parsing.ParserRegistry;
import org.infinispan.manager.DefaultCacheManager;
import org.infinispan.remoting.transport.jgroups.JGroupsTransport;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * vertx-infinispan over an encrypted, authenticated JGroups stack ({@code jgroups-encrypted.xml}):
 * TCP on one interface, discovery by a fixed member list, messages encrypted with the AES key
 * {@code cluster-key} of a PKCS#12 store, and joins refused unless the joiner proves the shared
 * secret with the store's RSA key {@code cluster-auth}. The caches are vertx-infinispan's own
 * ({@code default-infinispan.xml}).
 *
 * <p>This manager owns its cache manager: it starts it when Vert.x joins and stops it when Vert.x
 * leaves (vertx-infinispan leaves a cache manager it was given running).
 */
final class EncryptedInfinispan extends InfinispanClusterManager {

  /** Aliases in the store: the AES key of SYM_ENCRYPT and the RSA key pair of AUTH's X509Token. */
  static final String KEY_ALIAS = "cluster-key";
  static final String AUTH_ALIAS = "cluster-auth";

  private final DefaultCacheManager caches;
  private Vertx vertx;

  private EncryptedInfinispan(DefaultCacheManager caches) {
    super(caches);
    this.caches = caches;
  }

  /** A manager for cluster {@code name}, bound to {@code host}, finding {@code members}. Starts nothing yet. */
  static EncryptedInfinispan create(String name, String host, List<String> members, String keyStore, String password,
                                    String secret) {
    ConfigurationBuilderHolder holder;
    URL caches = InfinispanClusterManager.class.getClassLoader().getResource("default-infinispan.xml");
    try {
      holder = new ParserRegistry().parse(caches);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    holder.getGlobalConfigurationBuilder().classLoader(EncryptedInfinispan.class.getClassLoader());
    // Vert.x's leave stops the cache manager (below); Infinispan's own JVM shutdown hook would stop it
    // under that leave, and a node stopped with SIGTERM would then never exit.
    holder.getGlobalConfigurationBuilder().shutdown().hookBehavior(ShutdownHookBehavior.DONT_REGISTER);
    // The node id is the JGroups name: a UUID, so it never holds the '.' that the address scheme splits on.
    holder.getGlobalConfigurationBuilder().transport().defaultTransport()
      .clusterName(name)
      .nodeName(UUID.randomUUID().toString())
      .removeProperty(JGroupsTransport.CHANNEL_CONFIGURATOR)
      .addProperty(JGroupsTransport.CONFIGURATION_STRING, stack(host, members, keyStore, password, secret));
    return new EncryptedInfinispan(new DefaultCacheManager(holder, false));
  }

  /** The JGroups stack with this node's fields filled in (XML-escaped; JGroups' own ${...} refused). */
  static String stack(String host, List<String> members, String keyStore, String password, String secret) {
    String template;
    try (InputStream in = EncryptedInfinispan.class.getResourceAsStream("jgroups-encrypted.xml")) {
      template = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String initial = (members.isEmpty() ? List.of(host) : members).stream().map(m -> m + "[7800]")
      .collect(Collectors.joining(","));
    return template.replace("@HOST@", xml(host)).replace("@INITIAL_HOSTS@", xml(initial))
      .replace("@KEYSTORE@", xml(keyStore)).replace("@PASSWORD@", xml(password)).replace("@SECRET@", xml(secret));
  }

  private static String xml(String value) {
    if (value.contains("${")) {
      throw new IllegalArgumentException("a cluster setting may not contain '${' (JGroups would substitute it)");
    }
    return value.replace("&", "&amp;").replace("\"", "&quot;").replace("<", "&lt;").replace(">", "&gt;");
  }

  @Override
  public void init(Vertx vertx) {
    this.vertx = vertx;
    super.init(vertx);
  }

  @Override
  public void join(Completable<Void> promise) {
    vertx.<Void>executeBlocking(() -> {
      try {
        caches.start();
      } catch (RuntimeException e) {
        caches.stop(); // a refused join must not keep its ports
        throw e;
      }
      return null;
    }, false).onComplete((v, failure) -> {
      if (failure != null) {
        promise.fail(failure);
      } else {
        super.join(promise);
      }
    });
  }

  @Override
  public void leave(Completable<Void> promise) {
    super.leave((v, failure) -> vertx.<Void>executeBlocking(() -> {
      caches.stop();
      return null;
    }, false).onComplete((x, stopFailure) -> promise.complete(null, failure != null ? failure : stopFailure)));
  }
}
