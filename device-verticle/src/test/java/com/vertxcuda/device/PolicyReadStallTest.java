package com.vertxcuda.device;

import com.hazelcast.config.Config;
import com.vertxcuda.Addresses;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.internal.Nodes;
import io.vertx.core.Completable;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static com.vertxcuda.device.TestDevices.floats;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A new node whose cluster manager never answers the read of the cluster's policy: its first
 * requests to another node wait for that read in their order, and a listing for its own, but no
 * longer than the bound on a cluster map's answer (ClusterMaps, ten seconds); then both are answered.
 */
@ExtendWith(VertxExtension.class)
@Tag("runs-once") // the client node's wait for its cluster manager is the same whatever the device's isolation
class PolicyReadStallTest {

  /** Hazelcast that never answers for the cluster's policy map (every other map as usual). */
  static final class PolicyNeverAnswers extends HazelcastClusterManager {
    final AtomicInteger stalled = new AtomicInteger();

    PolicyNeverAnswers(Config config) {
      super(config);
    }

    @Override
    public <K, V> void getAsyncMap(String name, Completable<AsyncMap<K, V>> promise) {
      if (Addresses.CLUSTER_MAP.equals(name)) {
        stalled.incrementAndGet(); // never completed
        return;
      }
      super.getAsyncMap(name, promise);
    }
  }

  private final TwoNodes nodes = new TwoNodes();

  @AfterEach
  void close(VertxTestContext ctx) {
    nodes.close().onComplete(ctx.succeedingThenComplete());
  }

  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void aClusterManagerThatNeverAnswersThePolicyHoldsRequestsAndListingsAtMostTheBound(VertxTestContext ctx) {
    String cluster = "vertx-cuda-test-stall-" + ProcessHandle.current().pid();
    PolicyNeverAnswers[] manager = new PolicyNeverAnswers[1];
    long[] started = new long[1];
    long[] answered = new long[2];
    float[] values = {1f, 2f, 3f, 4f};
    nodes.start(cluster, config -> manager[0] = new PolicyNeverAnswers(config))
      .compose(n -> {
        Vertx c = n.client;
        started[0] = System.nanoTime();
        // The new node's first requests, to the other node's device: they wait for the policy read,
        // at most the bound, then go in their order.
        DeviceClient client = DeviceClient.create(c, new DeviceClientOptions().setNode(Nodes.self(nodes.gpu)));
        Future<float[]> roundTrip = client.alloc(DType.F32, values.length)
          .compose(h -> client.upload(h, values).compose(v -> client.downloadFloats(h))
            .compose(back -> client.free(h).map(back)))
          .onComplete(x -> answered[0] = System.nanoTime());
        // A listing made at the same time reads the policy again: it too goes on after the bound.
        Future<java.util.List<com.vertxcuda.DeviceInfo>> listing = DeviceRegistry.list(c)
          .onComplete(x -> answered[1] = System.nanoTime());
        return Future.all(roundTrip, listing).map(all -> {
          assertArrayEquals(values, roundTrip.result(), "the uploaded values come back");
          assertEquals(1, listing.result().size(), "the other node's device is listed: " + listing.result());
          return all;
        });
      })
      .onComplete(ctx.succeeding(all -> ctx.verify(() -> {
        assertTrue(manager[0].stalled.get() >= 2, "the policy map was asked for " + manager[0].stalled.get() + " times");
        for (long at : answered) {
          long millis = (at - started[0]) / 1_000_000;
          assertTrue(millis >= 9_000, "answered before the bound, as if the policy had been read: " + millis + " ms");
          assertTrue(millis < 20_000, "answered long past the bound: " + millis + " ms");
        }
        ctx.completeNow();
      })));
  }
}
