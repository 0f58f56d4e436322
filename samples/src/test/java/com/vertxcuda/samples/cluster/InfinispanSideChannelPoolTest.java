package com.vertxcuda.samples.cluster;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

/** {@link SideChannelPoolTest} on vertx-infinispan: JGroups on 127.0.0.1, encrypted and authenticated. */
class InfinispanSideChannelPoolTest extends SideChannelPoolTest {

  private static final String PASSWORD = "test-store-password";

  @TempDir
  static Path keys;

  @BeforeAll
  static void makeTheClusterKeys() throws Exception {
    ClusterKeys.generate(keys.resolve("cluster.p12"), PASSWORD);
  }

  @Override
  ClusterSettings settings() {
    ClusterSettings s = super.settings();
    s.manager = ClusterSettings.Manager.INFINISPAN;
    s.jgroupsKeyStore = keys.resolve("cluster.p12").toString();
    s.jgroupsPassword = PASSWORD;
    s.jgroupsSecret = "test-cluster-secret";
    return s;
  }
}
