package com.vertxcuda.samples.tracing;

import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.internal.Nodes;
import com.vertxcuda.testing.LocalCluster;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.tracing.TracingPolicy;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import io.vertx.tracing.opentelemetry.OpenTelemetryOptions;
import io.vertx.tracing.opentelemetry.OpenTelemetryTracingFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.List;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One trace from an HTTP request to the device, through Vert.x's tracer (vertx-opentelemetry,
 * OpenTelemetry's in-memory exporter), on the host backend: the handler allocates, uploads two 2×2
 * matrices, multiplies them and downloads the product; the trace holds the HTTP server span, a
 * client span per request under it, and under each a device span that says where its time went —
 * with the context in this process, in a device host, and on another node of a cluster.
 */
@ExtendWith(VertxExtension.class)
class TracingTest {

  private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
  private final SdkTracerProvider provider = SdkTracerProvider.builder()
    .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build();
  private final OpenTelemetrySdk otel = OpenTelemetrySdk.builder().setTracerProvider(provider)
    .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
  private Vertx gpu;
  private Vertx client;

  @AfterEach
  void close(VertxTestContext test) {
    Future<Void> closed = client != null && client != gpu ? LocalCluster.close(client, gpu) : gpu.close();
    closed.onComplete(ar -> {
      provider.close();
      test.completeNow();
    });
  }

  private VertxOptions traced() {
    return new VertxOptions().setTracingOptions(new OpenTelemetryOptions());
  }

  private static DeviceOptions device(Isolation isolation) {
    return new DeviceOptions().setBackend(BackendKind.HOST).setIsolation(isolation).setSpareDeviceHost(false);
  }

  @ParameterizedTest
  @EnumSource(value = Isolation.class, names = {"IN_PROCESS", "PROCESS"})
  void anHttpRequestIsOneTraceDownToTheDevice(Isolation isolation, VertxTestContext test) {
    gpu = Vertx.builder().with(traced()).withTracer(new OpenTelemetryTracingFactory(otel)).build();
    client = gpu;
    gpu.deployVerticle(new DeviceVerticle(device(isolation)))
      .compose(id -> serveAndCall(client, new DeviceClientOptions()))
      .onComplete(test.succeeding(product -> test.verify(() -> {
        assertEquals(new JsonArray("[19.0,22.0,43.0,50.0]"), product);
        checkTrace(test, "local");
      })));
  }

  @Test
  void aRemoteDeviceIsInTheSameTrace(VertxTestContext test) {
    String cluster = "vertx-cuda-tracing-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    node(cluster).compose(g -> {
      gpu = g;
      return gpu.deployVerticle(new DeviceVerticle(device(Isolation.IN_PROCESS)));
    }).compose(id -> node(cluster)).compose(c -> {
      client = c;
      return serveAndCall(client, new DeviceClientOptions().setNode(Nodes.self(gpu)));
    }).onComplete(test.succeeding(product -> test.verify(() -> {
      assertEquals(new JsonArray("[19.0,22.0,43.0,50.0]"), product);
      checkTrace(test, Nodes.self(gpu));
    })));
  }

  private Future<Vertx> node(String cluster) {
    System.setProperty("hazelcast.phone.home.enabled", "false");
    VertxOptions options = traced();
    options.getEventBusOptions().setHost("127.0.0.1").setClusterPublicHost("127.0.0.1").setPort(0);
    return Vertx.builder().with(options).withTracer(new OpenTelemetryTracingFactory(otel))
      .withClusterManager(new HazelcastClusterManager(LocalCluster.hazelcastConfig(cluster))).buildClustered();
  }

  /**
   * An HTTP server on {@code vertx} (traced always: the request comes with no trace of its own) whose
   * handler multiplies two 2×2 matrices on the device {@code target} names; the product, as the
   * response's JSON, once the server span has ended.
   */
  private Future<JsonArray> serveAndCall(Vertx vertx, DeviceClientOptions target) {
    DeviceClient device = DeviceClient.create(vertx, target);
    BlasClient blas = BlasClient.create(vertx, target);
    HttpServer server = vertx.createHttpServer(new HttpServerOptions().setTracingPolicy(TracingPolicy.ALWAYS)
      .setHost("127.0.0.1").setPort(0));
    server.requestHandler(req -> Future.all(device.alloc(DType.F32, 4), device.alloc(DType.F32, 4), device.alloc(DType.F32, 4))
      .compose(all -> {
        List<com.vertxcuda.BufferHandle> h = all.list();
        return device.upload(h.get(0), new float[] {1, 3, 2, 4})
          .compose(x -> device.upload(h.get(1), new float[] {5, 7, 6, 8}))
          .compose(x -> blas.gemm(Transpose.N, Transpose.N, 2, 2, 2, 1, h.get(0), 2, h.get(1), 2, 0, h.get(2), 2))
          .compose(c -> device.downloadFloats(c));
      })
      .onComplete(ar -> {
        if (ar.failed()) {
          req.response().setStatusCode(500).end(String.valueOf(ar.cause()));
          return;
        }
        // Column-major on the device: answered row by row.
        float[] c = ar.result();
        req.response().end(new JsonArray(List.of(c[0], c[2], c[1], c[3])).encode());
      }));
    return server.listen().compose(s -> vertx.createHttpClient()
      .request(HttpMethod.GET, s.actualPort(), "127.0.0.1", "/gemm")
      .compose(r -> r.send().compose(resp -> resp.body()))
      .compose(body -> serverSpanEnded(vertx).map(x -> new JsonArray(body.toString()))));
  }

  // The server span ends as the response is written, on the server's side of the connection: the
  // exporter is read until it holds it (a check per millisecond, bounded by the test's timeout).
  private Future<Void> serverSpanEnded(Vertx vertx) {
    Promise<Void> ended = Promise.promise();
    vertx.setPeriodic(1, id -> {
      if (exporter.getFinishedSpanItems().stream().anyMatch(s -> s.getKind() == SpanKind.SERVER
        && s.getName().equals("GET"))) {
        vertx.cancelTimer(id);
        ended.tryComplete();
      }
    });
    return ended.future();
  }

  private void checkTrace(VertxTestContext test, String node) {
    List<SpanData> spans = exporter.getFinishedSpanItems();
    SpanData http = spans.stream().filter(s -> s.getKind() == SpanKind.SERVER && s.getName().equals("GET"))
      .findFirst().orElseThrow();
    assertEquals(1, spans.stream().map(SpanData::getTraceId).distinct().count(), "one trace: " + names(spans));
    List<SpanData> clients = spans.stream().filter(s -> s.getName().startsWith("vertx-cuda ")).collect(Collectors.toList());
    assertEquals(List.of("vertx-cuda alloc", "vertx-cuda alloc", "vertx-cuda alloc", "vertx-cuda download",
        "vertx-cuda gemm", "vertx-cuda upload", "vertx-cuda upload"),
      clients.stream().map(SpanData::getName).sorted().collect(Collectors.toList()), names(spans));
    for (SpanData c : clients) {
      assertEquals(SpanKind.CLIENT, c.getKind());
      assertEquals(http.getSpanId(), c.getParentSpanId(), c.getName() + " is a child of the HTTP request's span");
      assertEquals(node, c.getAttributes().get(AttributeKey.stringKey("vertxcuda.node")));
      SpanData d = spans.stream().filter(s -> s.getName().startsWith("vertx-cuda.device ")
        && s.getParentSpanId().equals(c.getSpanId())).findFirst()
        .orElseThrow(() -> new AssertionError("no device span under " + c.getName() + ": " + names(spans)));
      assertEquals(SpanKind.SERVER, d.getKind());
      assertEquals(c.getName().substring("vertx-cuda ".length()), d.getAttributes().get(AttributeKey.stringKey("vertxcuda.operation")));
      long queue = Long.parseLong(d.getAttributes().get(AttributeKey.stringKey("vertxcuda.queue_ns")));
      long total = Long.parseLong(d.getAttributes().get(AttributeKey.stringKey("vertxcuda.device_ns")));
      assertTrue(queue >= 0 && queue <= total, c.getName() + ": queue " + queue + " ns within " + total + " ns");
      assertTrue(total <= c.getEndEpochNanos() - c.getStartEpochNanos(),
        c.getName() + ": the device's " + total + " ns fit the client's span");
    }
    SpanData gemm = clients.stream().filter(s -> s.getName().equals("vertx-cuda gemm")).findFirst().orElseThrow();
    assertEquals("F32", gemm.getAttributes().get(AttributeKey.stringKey("vertxcuda.dtype")));
    assertEquals("4", gemm.getAttributes().get(AttributeKey.stringKey("vertxcuda.elements")));
    assertEquals("16", gemm.getAttributes().get(AttributeKey.stringKey("vertxcuda.bytes")));
    SpanData gemmOnDevice = spans.stream().filter(s -> s.getName().equals("vertx-cuda.device gemm")).findFirst().orElseThrow();
    long gpuNanos = Long.parseLong(gemmOnDevice.getAttributes().get(AttributeKey.stringKey("vertxcuda.gpu_ns")));
    long streamWait = Long.parseLong(gemmOnDevice.getAttributes().get(AttributeKey.stringKey("vertxcuda.stream_wait_ns")));
    assertTrue(gpuNanos > 0, "the GEMM's execution was timed: " + gpuNanos);
    assertTrue(streamWait >= 0, "the GEMM's stream wait was timed: " + streamWait);
    SpanData upload = spans.stream().filter(s -> s.getName().equals("vertx-cuda.device upload")).findFirst().orElseThrow();
    assertTrue(Long.parseLong(upload.getAttributes().get(AttributeKey.stringKey("vertxcuda.copy_ns"))) >= 0,
      "an upload's copy was timed");
    assertNotNull(test);
    test.completeNow();
  }

  private static String names(List<SpanData> spans) {
    return spans.stream().map(s -> s.getName() + "(" + s.getKind() + ", parent " + s.getParentSpanId() + ", id "
      + s.getSpanId() + ")").collect(Collectors.joining(", "));
  }
}
