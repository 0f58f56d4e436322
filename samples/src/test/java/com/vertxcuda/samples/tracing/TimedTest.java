package com.vertxcuda.samples.tracing;

import com.vertxcuda.Addresses;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.RequestPhases;
import com.vertxcuda.RequestTiming;
import com.vertxcuda.Timed;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.internal.Nodes;
import com.vertxcuda.testing.LocalCluster;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A caller who asks ({@link Timed#measure}) gets, with the result, where each request of its work
 * spent its time on the device: on the host backend, with no tracer and a device that measures
 * nothing by itself, with the context in this process, in a device host, and on another node of a
 * cluster (the phases come back over the event bus).
 */
@ExtendWith(VertxExtension.class)
class TimedTest {

  private Vertx gpu;
  private Vertx client;

  @AfterEach
  void close(VertxTestContext test) {
    Future<Void> closed = client != null && client != gpu ? LocalCluster.close(client, gpu) : gpu.close();
    closed.onComplete(ar -> test.completeNow());
  }

  private static DeviceOptions device(Isolation isolation) {
    return new DeviceOptions().setBackend(BackendKind.HOST).setIsolation(isolation).setSpareDeviceHost(false);
  }

  @ParameterizedTest
  @EnumSource(value = Isolation.class, names = {"IN_PROCESS", "PROCESS"})
  void eachRequestOfTheWorkSaysWhereItsTimeWent(Isolation isolation, VertxTestContext test) {
    gpu = Vertx.vertx();
    client = gpu;
    gpu.deployVerticle(new DeviceVerticle(device(isolation)))
      .compose(id -> gemmTimed(client, new DeviceClientOptions()))
      .onComplete(test.succeeding(timed -> test.verify(() -> {
        check(timed, Nodes.self(gpu));
        test.completeNow();
      })));
  }

  @Test
  void aRemoteDeviceSendsThePhasesBackOverTheEventBus(VertxTestContext test) {
    String cluster = "vertx-cuda-timed-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    node(cluster).compose(g -> {
      gpu = g;
      return gpu.deployVerticle(new DeviceVerticle(device(Isolation.IN_PROCESS)));
    }).compose(id -> node(cluster)).compose(c -> {
      client = c;
      return gemmTimed(client, new DeviceClientOptions().setNode(Nodes.self(gpu)));
    }).onComplete(test.succeeding(timed -> test.verify(() -> {
      check(timed, Nodes.self(gpu));
      test.completeNow();
    })));
  }

  @Test
  void requestsOutsideTheWorkAreNotTimed(VertxTestContext test) {
    gpu = Vertx.vertx();
    client = gpu;
    DeviceClient device = DeviceClient.create(gpu);
    gpu.deployVerticle(new DeviceVerticle(device(Isolation.IN_PROCESS)))
      .compose(id -> device.alloc(DType.F32, 4))
      .compose(h -> {
        // Requests made on the caller's own context while the timed work runs (allocations, so they
        // can be told apart), and the work's: a fill, a second fill from that fill's callback (on the
        // work's context: timed if it is answered before the work completes), the download it returns.
        Future<BufferHandle> beside = device.alloc(DType.F32, 4).compose(x -> device.alloc(DType.F32, 4));
        Future<Timed<float[]>> timed = Timed.measure(gpu, () -> {
          device.fill(h, 5).compose(x -> device.fill(h, 6));
          return device.downloadFloats(h);
        });
        return Future.all(beside, timed).map(x -> timed.result());
      })
      .onComplete(test.succeeding(timed -> test.verify(() -> {
        List<String> ops = timed.requests().stream().map(RequestTiming::operation).toList();
        assertTrue(ops.contains("download") && ops.contains("fill"), "the work's fill and download are timed: " + ops);
        assertTrue(ops.stream().allMatch(op -> op.equals("download") || op.equals("fill")) && ops.size() <= 3,
          "nothing made on the caller's own context: " + timed.requests());
        test.completeNow();
      })));
  }

  @Test
  void aFailedRequestIsTimedWithItsFailureCode(VertxTestContext test) {
    gpu = Vertx.vertx();
    client = gpu;
    DeviceClient device = DeviceClient.create(gpu);
    gpu.deployVerticle(new DeviceVerticle(device(Isolation.IN_PROCESS)))
      .compose(id -> device.alloc(DType.F32, 4))
      .compose(h -> device.free(h).map(h))
      .compose(freed -> Timed.measure(gpu, () -> device.fill(freed, 1).transform(ar -> Future.succeededFuture(ar.failed()))))
      .onComplete(test.succeeding(timed -> test.verify(() -> {
        assertTrue(timed.result(), "the fill of a freed buffer failed");
        assertEquals(1, timed.requests().size(), String.valueOf(timed.requests()));
        assertEquals("fill", timed.requests().get(0).operation());
        assertEquals(com.vertxcuda.FailureCode.NOT_FOUND, timed.requests().get(0).failure());
        test.completeNow();
      })));
  }

  private Future<Vertx> node(String cluster) {
    System.setProperty("hazelcast.phone.home.enabled", "false");
    VertxOptions options = new VertxOptions();
    options.getEventBusOptions().setHost("127.0.0.1").setClusterPublicHost("127.0.0.1").setPort(0);
    return Vertx.builder().with(options)
      .withClusterManager(new HazelcastClusterManager(LocalCluster.hazelcastConfig(cluster))).buildClustered();
  }

  // Two 2×2 matrices uploaded, multiplied and the product downloaded, timed.
  private static Future<Timed<float[]>> gemmTimed(Vertx vertx, DeviceClientOptions target) {
    DeviceClient device = DeviceClient.create(vertx, target);
    BlasClient blas = BlasClient.create(vertx, target);
    return Future.all(device.alloc(DType.F32, 4), device.alloc(DType.F32, 4), device.alloc(DType.F32, 4))
      .compose(all -> {
        List<BufferHandle> h = all.list();
        return Timed.measure(vertx, () -> device.upload(h.get(0), new float[] {1, 3, 2, 4})
          .compose(x -> device.upload(h.get(1), new float[] {5, 7, 6, 8}))
          .compose(x -> blas.gemm(Transpose.N, Transpose.N, 2, 2, 2, 1, h.get(0), 2, h.get(1), 2, 0, h.get(2), 2))
          .compose(c -> device.downloadFloats(c)));
      });
  }

  private static void check(Timed<float[]> timed, String node) {
    // Column-major: [[19, 22], [43, 50]].
    assertArrayEquals(new float[] {19, 43, 22, 50}, timed.result());
    List<RequestTiming> requests = timed.requests();
    assertEquals(List.of("upload", "upload", "gemm", "download"),
      requests.stream().map(RequestTiming::operation).toList(), String.valueOf(requests));
    for (RequestTiming r : requests) {
      assertNull(r.failure(), r.toString());
      assertEquals(node, Addresses.nodeOf(r.device()), r.device());
      RequestPhases p = r.phases();
      assertNotNull(p, "phases of " + r);
      assertTrue(p.getTotalNanos() > 0, "total of " + r);
      assertTrue(p.getQueueNanos() >= 0 && p.getQueueNanos() <= p.getTotalNanos(), "queue of " + r);
      if (r.operation().equals("gemm")) {
        assertTrue(p.getGpuNanos() > 0 && p.getGpuNanos() <= p.getTotalNanos(), "GEMM's execution time: " + p);
        assertEquals(-1, p.getCopyNanos(), "a library call has no copy phase: " + p);
      } else {
        assertTrue(p.getCopyNanos() >= 0 && p.getCopyNanos() <= p.getTotalNanos(), "copy time of " + r);
        assertEquals(-1, p.getGpuNanos(), "a memory request has no library phase: " + p);
      }
    }
    assertEquals(requests.get(2).phases().getGpuNanos(), timed.sum(RequestPhases::getGpuNanos));
  }
}
