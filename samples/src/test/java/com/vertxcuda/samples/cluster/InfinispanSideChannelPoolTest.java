package com.vertxcuda.samples.cluster;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

/**
 * {@link SideChannelPoolTest}'s scenarios that depend on the cluster manager (an address's first use
 * waits for its subscriptions, devices redeployed), on vertx-infinispan: JGroups on 127.0.0.1,
 * encrypted and authenticated.
 *
 * <p>Tagged {@code alone}: its JGroups nodes take ports from the fixed range of the encrypted stack
 * (7800 on), as {@link InfinispanClusterProcessesTest}'s do; two clusters probing one range at once
 * can leave a node of one of them unjoined, so the two classes must not run side by side.
 */
@Tag("alone")
class InfinispanSideChannelPoolTest extends SideChannelPoolTest {

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
}
