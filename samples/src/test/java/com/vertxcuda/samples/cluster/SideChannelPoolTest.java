package com.vertxcuda.samples.cluster;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.FailureCode;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceNode;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.NodeOptions;
import com.vertxcuda.internal.CudaRuntime;
import com.vertxcuda.internal.Nodes;
import com.vertxcuda.message.DescribeRequest;
import com.vertxcuda.testing.LocalCluster;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIf;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client's connections to a node's bulk side channel, kept and reused: a GPU node (host backend)
 * and a client node, two clustered Vert.x in this JVM on 127.0.0.1, so the test reads what the node's
 * side channel saw ({@link CudaRuntime#bulkConnectionsAccepted}) and counts the describes the client sends
 * (an outbound interceptor on its event bus). Here on Hazelcast; {@link InfinispanSideChannelPoolTest}
 * runs those that depend on the cluster manager on encrypted Infinispan. The node-death cases need a node of their own process:
 * {@link ClusterProcessesTest}.
 */
@ExtendWith(VertxExtension.class)
class SideChannelPoolTest {

  /** Past the event-bus threshold (1 MiB): every transfer of this size takes the side channel. */
  private static final int SIZE = 4 << 20;

  private final String clusterName = "vertx-cuda-pool-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
  private Vertx gpu;
  private Vertx client;
  private DeviceNode node;
  private DeviceClient device;
  private final AtomicInteger describes = new AtomicInteger();

  /**
   * Why a scenario runs on Hazelcast only: what it checks (the side channel's bytes and connections,
   * the client artifact, the bus's TLS and codecs) runs the same whichever cluster manager holds the
   * membership. The Infinispan classes run the scenarios that depend on it: joins, leaves, the
   * subscriptions a first request waits for, registry events.
   */
  static final String SAME_ON_EVERY_CLUSTER_MANAGER =
    "the same on every cluster manager: the Hazelcast class runs it";

  /** Whether this class runs on a cluster manager other than Hazelcast (its subclass on Infinispan). */
  boolean onAnotherClusterManager() {
    return false;
  }

  /** Settings of a member of this test's cluster (a new object each time). */
  ClusterSettings settings() {
    ClusterSettings s = new ClusterSettings();
    s.name = clusterName;
    return s;
  }

  @BeforeEach
  void start(VertxTestContext ctx) {
    settings().start()
      .compose(g -> {
        gpu = g;
        return deployTheNode();
      })
      .compose(d -> settings().start())
      .onComplete(ctx.succeeding(c -> {
        client = c;
        client.eventBus().addOutboundInterceptor(m -> {
          if (m.body() instanceof DescribeRequest) {
            describes.incrementAndGet();
          }
          m.next();
        });
        device = DeviceClient.create(client, new DeviceClientOptions().setNode(Nodes.self(gpu)).setDevice(0));
        ctx.completeNow();
      }));
  }

  private Future<DeviceNode> deployTheNode() {
    return DeviceNode.deploy(gpu, new NodeOptions().setDeviceOptions(new DeviceOptions().setBackend(BackendKind.HOST)))
      .onSuccess(d -> node = d);
  }

  @AfterEach
  void close(VertxTestContext ctx) {
    LocalCluster.close(client, gpu)
      .onComplete(ctx.succeedingThenComplete());
  }

  /**
   * Eight uploads and eight downloads of different sizes (a chunk, several chunks and a part, a little
   * past the threshold), one after the other, come back byte-equal over one connection, whose upload
   * ring is reused: the node saw one connection, and the client asked the device for the channel
   * once, never as a barrier.
   */
  @DisabledIf(value = "onAnotherClusterManager", disabledReason = SAME_ON_EVERY_CLUSTER_MANAGER)
  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void sequentialTransfersShareOneConnection(VertxTestContext ctx) {
    int[] sizes = {SIZE, (24 << 20) - 8, (2 << 20) + 4096, (13 << 20) + 8};
    device.alloc(DType.U8, 24 << 20).compose(h -> {
      Future<Void> chain = Future.succeededFuture();
      for (int i = 0; i < 8; i++) {
        int size = sizes[i % sizes.length];
        Buffer data = ProcessCluster.pattern(size, 1000 + i);
        BufferHandle part = h.view(0, size);
        chain = chain.compose(x -> device.upload(part, data)).compose(x -> device.download(part)).map(back -> {
          assertTrue(data.equals(back), size + " bytes came back equal");
          return null;
        });
      }
      return chain;
    }).onComplete(ctx.succeeding(x -> ctx.verify(() -> {
      assertEquals(1, CudaRuntime.of(gpu).bulkConnectionsAccepted(), "the node's side channel saw one connection for 16 transfers");
      assertEquals(1, describes.get(), "one describe named the channel; no transfer waited for a barrier");
      ctx.completeNow();
    })));
  }

  /**
   * A download larger than the arrays a remote download lands in (32 MiB less 64 bytes each) comes
   * back as one Buffer, byte-equal across the arrays' edges, and uploads again as it is.
   */
  @DisabledIf(value = "onAnotherClusterManager", disabledReason = SAME_ON_EVERY_CLUSTER_MANAGER)
  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void aDownloadAcrossSeveralLandingArraysComesBackWhole(VertxTestContext ctx) {
    int size = (70 << 20) + 12_296; // a multiple of 8, as the pattern is
    Buffer data = ProcessCluster.pattern(size, 31);
    device.alloc(DType.U8, size).compose(h -> device.upload(h, data).compose(x -> device.download(h))
        .compose(back -> {
          assertEquals(size, back.length());
          assertTrue(data.equals(back), "the bytes came back equal");
          // The composite goes back up as it is, and down again equal.
          return device.fill(h, 0).compose(x -> device.upload(h, back)).compose(x -> device.download(h));
        }))
      .onComplete(ctx.succeeding(again -> ctx.verify(() -> {
        assertTrue(data.equals(again), "uploaded from the downloaded Buffer, the bytes came back equal");
        ctx.completeNow();
      })));
  }

  /**
   * A connection left idle past the client's limit (10 s) is closed; the next transfer asks a device
   * for the channel again and opens a new one.
   */
  @DisabledIf(value = "onAnotherClusterManager", disabledReason = SAME_ON_EVERY_CLUSTER_MANAGER)
  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void anIdleConnectionIsClosedAndTheNextTransferOpensAnother(VertxTestContext ctx) {
    Buffer data = ProcessCluster.pattern(SIZE, 7);
    device.alloc(DType.U8, SIZE)
      .compose(h -> device.upload(h, data).map(h))
      .compose(h -> {
        io.vertx.core.Promise<BufferHandle> idled = io.vertx.core.Promise.promise();
        client.setTimer(11_000, id -> idled.complete(h));
        return idled.future();
      })
      .compose(h -> device.download(h))
      .onComplete(ctx.succeeding(back -> ctx.verify(() -> {
        assertTrue(data.equals(back), "the bytes came back equal");
        assertEquals(2, CudaRuntime.of(gpu).bulkConnectionsAccepted(), "the idle connection was not reused");
        assertEquals(2, describes.get(), "with no connection open, the channel was asked for again");
        ctx.completeNow();
      })));
  }

  /**
   * A transfer answered FAIL (a forged token, refused while the upload still streams) leaves its
   * connection closed; the next transfer takes a new one and succeeds, and a connection whose transfer
   * answered DONE is reused.
   */
  @DisabledIf(value = "onAnotherClusterManager", disabledReason = SAME_ON_EVERY_CLUSTER_MANAGER)
  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void aFailMidStreamDoesNotPoisonTheNextTransfer(VertxTestContext ctx) {
    int size = 24 << 20;
    Buffer data = ProcessCluster.pattern(size, 42);
    device.alloc(DType.U8, size).compose(h -> {
      BufferHandle forged = new BufferHandle(h.node(), h.device(), h.generation(), h.id(), h.dtype(), h.count(),
        h.tokenHigh() ^ 1, h.tokenLow(), h.offset(), h.length());
      return expect(FailureCode.FORBIDDEN, device.upload(forged, data))
        .compose(x -> device.upload(h, data))
        .compose(x -> device.download(h))
        .map(back -> {
          assertTrue(data.equals(back), "after a FAIL the next upload and download succeed");
          return null;
        })
        .compose(x -> expect(FailureCode.FORBIDDEN, device.download(forged)))
        .compose(x -> device.download(h))
        .map(back -> {
          assertTrue(data.equals(back), "after a FAIL the next download succeeds");
          return null;
        });
    }).onComplete(ctx.succeeding(x -> ctx.verify(() -> {
      // The forged upload's connection, the one the good upload and download shared (closed by the
      // forged download's FAIL), and the last download's.
      assertEquals(3, CudaRuntime.of(gpu).bulkConnectionsAccepted(), "a connection that carried a FAIL was never reused");
      ctx.completeNow();
    })));
  }

  /**
   * One caller, nothing awaited: requests over the event bus and streams over the side channel keep
   * the order they were made in, both ways. A GEMM made after an upload reads the uploaded matrix,
   * not the one uploaded after it; a fill made before an upload is overwritten by it, one made after it
   * is read by the download after that. Three rounds on the same connection.
   */
  @DisabledIf(value = "onAnotherClusterManager", disabledReason = SAME_ON_EVERY_CLUSTER_MANAGER)
  @Test
  @Timeout(value = 180, timeUnit = TimeUnit.SECONDS)
  void streamsAndBusRequestsKeepTheCallersOrder(VertxTestContext ctx) {
    int n = 1024;
    BlasClient blas = BlasClient.create(client, new DeviceClientOptions().setNode(Nodes.self(gpu)).setDevice(0));
    gemmOperands(n)
      .compose(g -> {
        BufferHandle a = g.a();
        BufferHandle ones = g.ones();
        BufferHandle c = g.c();
        float[] unit = unit(n);
        // The BLAS address is used once, awaited, before the rounds: the rounds' describes are the
        // streams' own (a first use's wait is busRequestsKeepTheCallersOrderAcrossAddressesOnFirstUse's
        // and aStreamWaitsForAFirstRequestToALibraryAddress's).
        return device.upload(ones, unit)
          .compose(x -> blas.gemm(Transpose.N, Transpose.N, n, 1, n, 1, a, n, ones, n, 0, c, n))
          .compose(x -> {
            Future<Void> rounds = Future.succeededFuture();
            for (int r = 0; r < 3; r++) {
              int round = r;
              rounds = rounds.compose(x2 -> round(blas, a, ones, c, n, round));
            }
            return rounds;
          });
      })
      .onComplete(ctx.succeeding(x -> ctx.verify(() -> {
        // Each stream made right after requests over the bus to the device's address (a fill) waited
        // for a describe behind them, two a round; the one after the GEMM (the BLAS address) waited
        // for the GEMM's answer instead.
        assertTrue(describes.get() >= 6, describes.get() + " describes");
        ctx.completeNow();
      })));
  }

  /**
   * A GEMM that is this JVM's first request to the node's BLAS address (the cluster looks up who
   * serves it first), then a stream over its input, neither awaited: the stream waits for the GEMM's
   * answer rather than a describe on the device's address, which could overtake the GEMM, so the
   * GEMM reads the matrix from before the stream.
   */
  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void aStreamWaitsForAFirstRequestToALibraryAddress(VertxTestContext ctx) {
    int n = 1024;
    float[] first = matrix(n, 1);
    float[] second = matrix(n, 2);
    float[] unit = unit(n);
    gemmOperands(n)
      .compose(g -> {
        BufferHandle a = g.a();
        BufferHandle ones = g.ones();
        BufferHandle c = g.c();
        return Future.all(device.upload(ones, unit), device.upload(a, first)).compose(x -> {
          BlasClient blas = BlasClient.create(client, new DeviceClientOptions().setNode(Nodes.self(gpu)).setDevice(0));
          Future<BufferHandle> gemm = blas.gemm(Transpose.N, Transpose.N, n, 1, n, 1, a, n, ones, n, 0, c, n);
          Future<?> over = device.upload(a, second);
          Future<float[]> sums = device.downloadFloats(c);
          return Future.all(gemm, over, sums).map(y -> sums.result());
        });
      })
      .onComplete(ctx.succeeding(sums -> ctx.verify(() -> {
        assertRowSums(first, sums, n, "the GEMM read the matrix from before the stream");
        ctx.completeNow();
      })));
  }

  /**
   * Requests over the bus keep the caller's order across a device's addresses on first use: a
   * matrix uploaded (below the side channel's threshold: one bus message), a GEMM that reads it (the
   * BLAS address, which this client never used before), then a fill of the matrix (the device's
   * address, looked up long ago), made without waiting. The GEMM reads the uploaded matrix: a first
   * message to an address waits for the cluster's lookup of who serves it, and the fill, sent to an
   * address already looked up, would overtake it (it did, on Hazelcast and on Infinispan, before the
   * caller's order held requests behind a first use).
   */
  @Test
  @Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
  void busRequestsKeepTheCallersOrderAcrossAddressesOnFirstUse(VertxTestContext ctx) {
    String blasAddress = com.vertxcuda.Addresses.library(Nodes.self(gpu), 0, com.vertxcuda.Library.BLAS);
    String never = com.vertxcuda.Addresses.library(Nodes.self(gpu), 0, com.vertxcuda.Library.FFT);
    assertTrue(com.vertxcuda.internal.VertxInternals.nodeSelectorReadable(client), "the event bus's node selector is read");
    assertFalse(com.vertxcuda.internal.VertxInternals.clusterKnowsWhoServes(client, blasAddress), "not used yet");
    firstUse(3).onComplete(ctx.succeeding(x -> ctx.verify(() -> {
      // What the order relies on: the bus now holds who serves the addresses used, not the others.
      assertTrue(com.vertxcuda.internal.VertxInternals.clusterKnowsWhoServes(client, blasAddress), "used");
      assertFalse(com.vertxcuda.internal.VertxInternals.clusterKnowsWhoServes(client, never), "never used");
      ctx.completeNow();
    })));
  }

  /**
   * The same order when the node's devices are undeployed and deployed again while both nodes live:
   * the cluster forgets who served the device's addresses (a lookup found none), so the GEMM after the
   * redeployment is a first use again and the fill must not overtake it, although this client has
   * been answered at both addresses before.
   */
  @Test
  @Timeout(value = 90, timeUnit = TimeUnit.SECONDS)
  void busRequestsKeepTheCallersOrderAfterTheDevicesAreRedeployed(VertxTestContext ctx) {
    String blasAddress = com.vertxcuda.Addresses.library(Nodes.self(gpu), 0, com.vertxcuda.Library.BLAS);
    String deviceAddress = com.vertxcuda.Addresses.device(Nodes.self(gpu), 0);
    firstUse(3)
      .compose(x -> node.undeploy())
      .compose(x -> noHandlersAt(blasAddress, 200))
      .compose(x -> deployTheNode())
      // The client's cluster manager has heard of the new handlers (asked directly: the event bus's
      // own lookup would make the GEMM's address known before the GEMM, the case under test).
      .compose(x -> registeredAt(deviceAddress, 200))
      .compose(x -> registeredAt(blasAddress, 200))
      .compose(x -> firstUse(5))
      .onComplete(ctx.succeedingThenComplete());
  }

  // Asks the client's own event bus who serves {@code address} until nobody does (a probe that
  // reaches a handler before the cluster has heard of the undeployment is not answered: it times out).
  private Future<Void> noHandlersAt(String address, int tries) {
    return until(tries, address + " is still served after the undeployment", () -> client.eventBus()
      .request(address, "anyone?", new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(500))
      .transform(ar -> Future.succeededFuture(ar.failed() && ar.cause() instanceof io.vertx.core.eventbus.ReplyException
        && ((io.vertx.core.eventbus.ReplyException) ar.cause()).failureType() == io.vertx.core.eventbus.ReplyFailure.NO_HANDLERS)));
  }

  // Asks the client's cluster manager who serves {@code address} until someone does.
  private Future<Void> registeredAt(String address, int tries) {
    return until(tries, address + " is not served after the deployment", () -> {
      Promise<java.util.List<io.vertx.core.spi.cluster.RegistrationInfo>> asked = Promise.promise();
      com.vertxcuda.internal.VertxInternals.clusterManager(client).getRegistrations(address, asked);
      return asked.future().transform(ar -> Future.succeededFuture(ar.succeeded() && !ar.result().isEmpty()));
    });
  }

  // Asks {@code check} every 20 ms until it says true, at most {@code tries} more times.
  private Future<Void> until(int tries, String failure, java.util.function.Supplier<Future<Boolean>> check) {
    return check.get().compose(done -> {
      if (done) {
        return Future.succeededFuture();
      }
      if (tries == 0) {
        return Future.failedFuture(new AssertionError(failure));
      }
      Promise<Void> later = Promise.promise();
      client.setTimer(20, t -> until(tries - 1, failure, check).onComplete(later));
      return later.future();
    });
  }

  // An upload, a GEMM that reads it through a BLAS client made now, then a fill of its input, none
  // awaited: the GEMM reads the upload, the fill lands last.
  private Future<Void> firstUse(int seed) {
    int n = 256;
    float[] first = matrix(n, seed);
    float[] unit = unit(n);
    return gemmOperands(n)
      .compose(g -> {
        BufferHandle a = g.a();
        BufferHandle ones = g.ones();
        BufferHandle c = g.c();
        BlasClient blas = BlasClient.create(client, new DeviceClientOptions().setNode(Nodes.self(gpu)).setDevice(0));
        Future<?> ready = device.upload(ones, unit);
        Future<?> up = device.upload(a, first);
        Future<BufferHandle> gemm = blas.gemm(Transpose.N, Transpose.N, n, 1, n, 1, a, n, ones, n, 0, c, n);
        Future<?> cleared = device.fill(a, 0);
        Future<float[]> sums = device.downloadFloats(c);
        Future<float[]> after = device.downloadFloats(a);
        return Future.all(List.of(ready, up, gemm, cleared, sums, after)).map(y -> {
          for (float v : after.result()) {
            assertEquals(0f, v, "the fill came last");
          }
          assertRowSums(first, sums.result(), n, "the GEMM read the uploaded matrix, not the later fill");
          return null;
        });
      });
  }

  /**
   * A first use that fails does not keep the caller's later requests waiting: a describe of a device
   * the node does not have (an address nobody serves, so no handler answers) is answered with its
   * failure, and the fill sent right after it, held behind it, is then sent and lands.
   */
  @Test
  @Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
  void aFailedFirstUseReleasesTheRequestsHeldBehindIt(VertxTestContext ctx) {
    DeviceClient missing = DeviceClient.create(client, new DeviceClientOptions().setNode(Nodes.self(gpu)).setDevice(7));
    device.alloc(DType.F32, 256)
      .compose(h -> {
        Future<?> nobody = missing.describe();
        Future<?> filled = device.fill(h, 2);
        Future<float[]> read = device.downloadFloats(h);
        return Future.join(nobody, filled, read).transform(ar -> {
          ctx.verify(() -> {
            assertTrue(nobody.failed(), "no device 7 on the node");
            assertEquals(FailureCode.CONTEXT_LOST, ((CudaException) nobody.cause()).code(), nobody.cause().toString());
            assertTrue(filled.succeeded(), "the fill held behind the failed first use was sent: " + filled.cause());
            for (float v : read.result()) {
              assertEquals(2f, v);
            }
          });
          return Future.succeededFuture();
        });
      })
      .onComplete(ctx.succeedingThenComplete());
  }

  private Future<Void> round(BlasClient blas, BufferHandle a, BufferHandle ones, BufferHandle c, int n, int round) {
    float[] first = matrix(n, round * 2 + 1);
    float[] second = matrix(n, round * 2 + 2);
    List<Future<?>> made = new ArrayList<>();
    // A fill and an upload of A's first MiB over the bus (one message, which the device pumps) that
    // the stream after them overwrites, then C = A·1 of the first matrix, then a second matrix over A
    // (it must wait for the GEMM), then A's last values filled, then A and C read back.
    float[] busPart = new float[(1 << 20) / 4];
    java.util.Arrays.fill(busPart, 100 + round);
    made.add(device.fill(a, -5));
    made.add(device.upload(a.view(0, busPart.length), busPart));
    made.add(device.upload(a, first));
    made.add(blas.gemm(Transpose.N, Transpose.N, n, 1, n, 1, a, n, ones, n, 0, c, n));
    made.add(device.upload(a, second));
    made.add(device.fill(a.view((long) n * n - 2, 2), 7));
    Future<float[]> readA = device.downloadFloats(a);
    Future<float[]> readC = device.downloadFloats(c);
    made.add(readA);
    made.add(readC);
    return Future.all(made).map(x -> {
      float[] expectedA = second.clone();
      expectedA[n * n - 2] = 7;
      expectedA[n * n - 1] = 7;
      assertTrue(java.util.Arrays.equals(expectedA, readA.result()), "round " + round + ": A is the second matrix, its last values filled");
      assertRowSums(first, readC.result(), n, "round " + round + ": the GEMM read the first matrix");
      return null;
    });
  }

  // Small integers (exact in float sums), different for every seed and position.
  /** The operands of C = A·1: A n×n, the vector 1 and C, F32, allocated on the device (nothing uploaded). */
  private record GemmOperands(BufferHandle a, BufferHandle ones, BufferHandle c) {
  }

  private Future<GemmOperands> gemmOperands(int n) {
    return Future.all(device.alloc(DType.F32, (long) n * n), device.alloc(DType.F32, n), device.alloc(DType.F32, n))
      .map(all -> new GemmOperands(all.resultAt(0), all.resultAt(1), all.resultAt(2)));
  }

  private static float[] unit(int n) {
    float[] unit = new float[n];
    java.util.Arrays.fill(unit, 1f);
    return unit;
  }

  // C = A·1 of an n×n column-major A: each row's sum.
  private static void assertRowSums(float[] a, float[] sums, int n, String what) {
    for (int i = 0; i < n; i++) {
      double expected = 0;
      for (int j = 0; j < n; j++) {
        expected += a[i + j * n];
      }
      assertEquals(expected, sums[i], 1e-2, what + ", row " + i);
    }
  }

  private static float[] matrix(int n, int seed) {
    float[] m = new float[n * n];
    for (int i = 0; i < m.length; i++) {
      m[i] = (i * 31 + seed * 17) % 13 - 6;
    }
    return m;
  }

  private static Future<Void> expect(FailureCode code, Future<?> f) {
    return f.transform(ar -> {
      if (ar.succeeded()) {
        return Future.failedFuture(new AssertionError("expected " + code + ", it succeeded"));
      }
      if (!(ar.cause() instanceof CudaException) || ((CudaException) ar.cause()).code() != code) {
        return Future.failedFuture(new AssertionError("expected " + code + ", got " + ar.cause(), ar.cause()));
      }
      return Future.succeededFuture();
    });
  }
}
