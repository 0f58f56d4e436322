package com.vertxcuda.samples.cluster;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceNode;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.NodeOptions;
import com.vertxcuda.internal.Nodes;
import com.vertxcuda.testing.LocalCluster;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A remote caller's bulk streams keep their place behind the requests it sent the node before over
 * the event bus — one its own timeout gave up on, one held behind a first use of another address —
 * and the cluster watch outlives the verticle that first used it. A GPU node and a client node
 * (Hazelcast on 127.0.0.1, the host backend).
 */
@ExtendWith(VertxExtension.class)
class RemoteOrderTest {

  private final String clusterName = "vertx-cuda-order-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
  private Vertx gpu;
  private Vertx client;

  private ClusterSettings settings() {
    ClusterSettings s = new ClusterSettings();
    s.name = clusterName;
    return s;
  }

  @BeforeEach
  void start(VertxTestContext ctx) {
    settings().start()
      .compose(g -> {
        gpu = g;
        return DeviceNode.deploy(gpu, new NodeOptions().setDeviceOptions(new DeviceOptions().setBackend(BackendKind.HOST)));
      })
      .compose(d -> settings().start())
      .onComplete(ctx.succeeding(c -> {
        client = c;
        ctx.completeNow();
      }));
  }

  @AfterEach
  void close(VertxTestContext ctx) {
    LocalCluster.close(client, gpu)
      .onComplete(ctx.succeedingThenComplete());
  }

  private DeviceClientOptions on(Vertx node, int device, long timeout) {
    return new DeviceClientOptions().setNode(Nodes.self(node)).setDevice(device).setTimeout(timeout);
  }

  private Future<Void> sleep(long ms) {
    Promise<Void> p = Promise.promise();
    client.setTimer(ms, id -> p.complete());
    return p.future();
  }

  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  @Tag("alone")
  void aLibraryRequestTheCallerGaveUpOnDoesNotHoldItsLaterStreams(VertxTestContext ctx) {
    int n = 512;
    Context caller = client.getOrCreateContext();
    caller.runOnContext(v -> {
      DeviceClient dev = DeviceClient.create(client, on(gpu, 0, 6_000));
      BlasClient impatient = BlasClient.create(client, on(gpu, 0, 30));
      Future.all(dev.alloc(DType.F32, (long) n * n), dev.alloc(DType.F32, (long) n * n),
          dev.alloc(DType.F32, (long) n * n), dev.alloc(DType.U8, 4 << 20))
        .compose(all -> {
          BufferHandle a = all.resultAt(0);
          BufferHandle b = all.resultAt(1);
          BufferHandle c = all.resultAt(2);
          BufferHandle big = all.resultAt(3);
          Buffer data = ProcessCluster.pattern(4 << 20, 3);
          // A 512^3 GEMM on the host backend outlasts its 30 ms: the caller stops waiting for it.
          return impatient.gemm(Transpose.N, Transpose.N, n, n, n, 1, a, n, b, n, 0, c, n)
            .transform(ar -> dev.fill(c, 0))
            .compose(x -> sleep(300))
            .compose(x -> {
              long t0 = System.nanoTime();
              return dev.upload(big, data).compose(x2 -> dev.download(big)).map(back -> {
                long ms = (System.nanoTime() - t0) / 1_000_000;
                ctx.verify(() -> {
                  assertEquals(data, back, "the 4 MiB came back different");
                  org.junit.jupiter.api.Assertions.assertTrue(ms < 4_000, "the streams took " + ms + " ms");
                });
                return null;
              });
            });
        })
        .onComplete(ctx.succeedingThenComplete());
    });
  }

  @Test
  @Timeout(value = 180, timeUnit = TimeUnit.SECONDS)
  void aStreamDoesNotOvertakeARequestHeldBehindAFirstUse(VertxTestContext ctx) {
    int floats = (4 << 20) / 4;
    int part = (1 << 20) / 4; // 1 MiB: one event-bus message
    Context caller = client.getOrCreateContext();
    caller.runOnContext(v -> {
      DeviceClient dev = DeviceClient.create(client, on(gpu, 0, 30_000));
      DeviceClient nobody = DeviceClient.create(client, on(gpu, 7, 30_000));
      List<String> wrong = new ArrayList<>();
      dev.alloc(DType.F32, floats)
        .compose(a -> dev.upload(a, new float[floats]).map(a)) // a connection of the pool, kept
        .compose(a -> {
          Future<Void> rounds = Future.succeededFuture();
          for (int r = 1; r <= 8; r++) {
            int round = r;
            rounds = rounds.compose(x -> {
              float[] value = new float[part];
              Arrays.fill(value, round);
              Future<?> first = nobody.describe();                   // a first use: no device 7 serves it
              Future<?> up = dev.upload(a.view(0, part), value);    // held behind it, one bus message
              Future<float[]> down = dev.downloadFloats(a);         // a stream, made last
              return Future.join(first, up, down).transform(ar -> {
                if (up.failed() || down.failed()) {
                  return Future.failedFuture(new AssertionError("round " + round + ": " + up.cause() + " / " + down.cause()));
                }
                float got = down.result()[0];
                if (got != round) {
                  wrong.add("round " + round + ": read " + got + ", the upload made before the download wrote " + round);
                }
                return Future.succeededFuture();
              });
            });
          }
          return rounds;
        })
        .onComplete(ctx.succeeding(x -> ctx.verify(() -> {
          assertEquals(List.of(), wrong, "a stream overtook the caller's earlier upload");
          ctx.completeNow();
        })));
    });
  }

  /**
   * A remote upload over the side channel whose handle claims more than its buffer holds is refused
   * BAD_REQUEST and writes nothing: the node checks the whole range before it writes the first
   * segment (it wrote the segments inside the buffer, then refused the one past its end).
   */
  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void aRemoteUploadPastTheBuffersEndWritesNothing(VertxTestContext ctx) {
    int n = 6 << 20; // 24 MiB of floats: three of the node's 8 MiB segments, and three more claimed
    Context caller = client.getOrCreateContext();
    caller.runOnContext(v -> {
      DeviceClient dev = DeviceClient.create(client, on(gpu, 0, 30_000));
      dev.alloc(DType.F32, n).compose(h -> dev.fill(h, 0).compose(x -> {
        BufferHandle claim = new BufferHandle(h.toJson().put("length", 2L * n));
        Buffer sevens = Buffer.buffer(8 * n);
        for (int i = 0; i < 2 * n; i++) {
          sevens.appendFloatLE(7f);
        }
        return dev.upload(claim, sevens).transform(ar -> {
          ctx.verify(() -> {
            org.junit.jupiter.api.Assertions.assertTrue(ar.failed(), "an upload past the buffer's end succeeded");
            assertEquals(com.vertxcuda.FailureCode.BAD_REQUEST, ((com.vertxcuda.CudaException) ar.cause()).code(),
              String.valueOf(ar.cause()));
          });
          return dev.downloadFloats(h);
        });
      })).onComplete(ctx.succeeding(back -> {
        long written = 0;
        for (float f : back) {
          written += f == 7f ? 1 : 0;
        }
        long w = written;
        ctx.verify(() -> assertEquals(0, w, "elements the refused upload wrote"));
        ctx.completeNow();
      }));
    });
  }

  /**
   * A new node's first requests wait for the cluster's policy to be read (on the context that first
   * used the cluster); those a caller makes once it is read must not overtake its own still waiting.
   * Writes of 1, 2, 3... to one buffer (fills and array uploads, which keep their place as holds),
   * one per task of the caller's context, from before the read until the first after it: the buffer ends
   * holding the last. Where the read completes at once (its
   * map entry is on the client's own member: nothing waits) another client node tries, up to 4.
   */
  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void aNewNodesFirstRequestsAreNotOvertakenByLaterOnes(VertxTestContext ctx) {
    DeviceClient local = DeviceClient.create(gpu, on(gpu, 0, 10_000));
    local.alloc(DType.F32, 16)
      .compose(h -> firstRequests(h, local, 4))
      .onComplete(ctx.succeeding(waited -> ctx.verify(() -> {
        org.junit.jupiter.api.Assumptions.assumeTrue(waited, "the policy was read at once on 4 client nodes");
        ctx.completeNow();
      })));
  }

  // Whether any fill waited for the policy; fails where the buffer holds an earlier fill's value.
  private Future<Boolean> firstRequests(BufferHandle h, DeviceClient local, int tries) {
    Promise<Integer> last = Promise.promise();
    List<Future<?>> fills = new ArrayList<>();
    int[] sentBeforeRead = new int[1];
    Context first = ((io.vertx.core.internal.VertxInternal) client).createEventLoopContext();
    Context caller = ((io.vertx.core.internal.VertxInternal) client).createEventLoopContext();
    caller.runOnContext(v -> {
      // The caller starts the moment the read has started (a test may stop its loop that long).
      java.util.concurrent.CountDownLatch reading = new java.util.concurrent.CountDownLatch(1);
      first.runOnContext(x -> {
        DeviceClient.create(client, on(gpu, 0, 30_000)).describe();
        reading.countDown();
      });
      try {
        reading.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
      DeviceClient dev = DeviceClient.create(client, on(gpu, 0, 30_000));
      com.vertxcuda.internal.ClusterWatch watch = com.vertxcuda.internal.CudaRuntime.of(client).clusterWatch();
      int[] sentAfterRead = new int[1];
      // One fill per task, so that the read completes (on another thread) between two of them.
      Runnable[] next = new Runnable[1];
      next[0] = () -> {
        int value = fills.size() + 1;
        if (watch.policyRead().isComplete()) {
          sentAfterRead[0]++;
        } else {
          sentBeforeRead[0]++;
        }
        // Fills alternate with array uploads: an array takes the pump, which keeps a place of its own
        // in the order (a hold) rather than sending one request.
        if (value % 2 == 0) {
          fills.add(dev.fill(h, value));
        } else {
          float[] values = new float[16];
          Arrays.fill(values, value);
          fills.add(dev.upload(h, values));
        }
        if (sentAfterRead[0] < 1 && value < 20_000) {
          caller.runOnContext(x -> next[0].run());
        } else {
          last.complete(value);
        }
      };
      next[0].run();
    });
    return last.future()
      .compose(n -> Future.all(fills).map(n))
      .compose(n -> local.downloadFloats(h).compose(values -> {
        System.out.println("[figure] " + n + " fills, " + sentBeforeRead[0] + " made before the policy was read, the "
          + "buffer holds " + values[0]);
        if (values[0] != n) {
          return Future.failedFuture(new AssertionError(n + " fills (" + sentBeforeRead[0] + " made before the cluster's "
            + "policy was read): the buffer holds " + values[0] + ", an earlier one's value"));
        }
        if (sentBeforeRead[0] > 0 || tries <= 1) {
          return Future.succeededFuture(sentBeforeRead[0] > 0);
        }
        return client.close().compose(x -> settings().start()).compose(c -> {
          client = c;
          return firstRequests(h, local, tries - 1);
        });
      }));
  }

  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  void theClusterWatchOutlivesTheFirstVerticleThatUsedIt(VertxTestContext ctx) {
    Vertx[] third = new Vertx[1];
    client.deployVerticle(new io.vertx.core.VerticleBase() {
        @Override
        public Future<?> start() {
          return DeviceClient.create(vertx, on(gpu, 0, 10_000)).describe();
        }
      })
      .compose(id -> client.undeploy(id))
      .compose(x -> settings().start())
      .compose(g -> {
        third[0] = g;
        return DeviceNode.deploy(g, new NodeOptions().setDeviceOptions(new DeviceOptions().setBackend(BackendKind.HOST)));
      })
      .compose(x -> sleep(1_500))
      .compose(x -> DeviceClient.create(client, on(third[0], 0, 10_000)).describe())
      .transform(ar -> {
        Future<Void> closed = third[0] == null ? Future.succeededFuture() : third[0].close();
        return closed.transform(c -> ar.succeeded() ? Future.succeededFuture()
          : Future.failedFuture(new AssertionError("a node that joined after the first verticle to use the "
            + "cluster watch was undeployed is unreachable: " + ar.cause(), ar.cause())));
      })
      .onComplete(ctx.succeedingThenComplete());
  }
}
