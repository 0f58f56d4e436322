package com.vertxcuda.samples.cluster;

import com.vertxcuda.internal.VertxInternals;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link ClusterProcessesTest}'s scenarios that depend on the cluster manager (joins, leaves, a killed
 * node's requests and buffers, spreading over devices), on vertx-infinispan: JGroups on 127.0.0.1 with TCPPING, every message
 * encrypted (SYM_ENCRYPT, an AES key made here) and joins authenticated (AUTH, X509Token with a
 * shared secret); and a member without the secret cannot join.
 */
class InfinispanClusterProcessesTest extends ClusterProcessesTest {

  @TempDir
  static Path keys;

  @BeforeAll
  static void makeTheClusterKeys() throws Exception {
    ClusterKeys.generate(keys);
  }

  @Override
  boolean onAnotherClusterManager() {
    return true;
  }

  @Override
  ClusterSettings settings() {
    return ClusterKeys.encrypted(super.settings(), keys);
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aMemberWithoutTheSecretCannotJoin() throws Exception {
    Vertx member = join(settings());
    List<String> before = VertxInternals.clusterManager(member).getNodes();
    assertEquals(1, before.size(), before.toString());

    ClusterSettings intruder = settings();
    intruder.jgroupsSecret = "not-the-secret";
    Exception refused = assertThrows(Exception.class, () -> join(intruder));
    assertTrue(String.valueOf(causes(refused)).contains("uthentication"), causes(refused));
    assertEquals(before, VertxInternals.clusterManager(member).getNodes(), "the cluster's members did not change");

    // Nor is one let in that runs no encryption at all: Infinispan without the store is refused at once.
    ClusterSettings plain = settings();
    plain.jgroupsKeyStore = null;
    assertThrows(IllegalArgumentException.class, () -> join(plain));
  }

  private static String causes(Throwable t) {
    StringBuilder all = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      all.append(c).append(" | ");
    }
    return all.toString();
  }
}
