package com.vertxcuda.bench;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.bench.result.Series;
import com.vertxcuda.device.DeviceOptions;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.spi.tracing.SpanKind;
import io.vertx.core.spi.tracing.TagExtractor;
import io.vertx.core.spi.tracing.VertxTracer;
import io.vertx.core.tracing.TracingPolicy;
import io.vertx.tracing.opentelemetry.OpenTelemetryTracingFactory;
import org.HdrHistogram.Histogram;

import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static com.vertxcuda.bench.Await.await;

/**
 * Sweep {@code roundtrip.fill.tracing}: the 1 KiB fill round trip of {@code roundtrip.fill} through a
 * typed client, on a device of its own in the run's isolation mode, three ways: on a Vert.x without a
 * tracer ("tracing off", what the hops sweep measures), on a Vert.x with OpenTelemetry's tracer but no
 * trace around the call ("tracer, untraced": the client's spans follow the caller's trace, so none is
 * made), and with each fill inside a trace of its own ("traced": a client span, the device's span with
 * the measured phases, each exported to an exporter that counts and drops them). Each is a headline
 * point, measured {@link Bench#REPEATS} times; a few seconds in all.
 */
final class TracingSection implements Section {

  static final String SWEEP = "roundtrip.fill.tracing";
  private static final int BYTES = 1024;

  @Override
  public String name() {
    return "tracing";
  }

  @Override
  public void alone(Bench bench, DeviceOptions options) throws Exception {
    Plan plan = new Plan(bench.sizes.fillRuns() / 10, bench.sizes.fillRuns());
    String path = null;
    try (DeployedDevice d = DeployedDevice.deploy(options)) {
      path = d.path;
      fills(bench, d, plan, "tracing off", false);
    }
    AtomicLong exported = new AtomicLong();
    SdkTracerProvider provider = SdkTracerProvider.builder()
      .addSpanProcessor(SimpleSpanProcessor.create(new CountingExporter(exported))).build();
    // W3C trace context: the headers that carry a trace from the client's span to the device's.
    OpenTelemetrySdk otel = OpenTelemetrySdk.builder().setTracerProvider(provider)
      .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
    try (DeployedDevice d = DeployedDevice.deploy(options, DeployedDevice.newVertx(new OpenTelemetryTracingFactory(otel)))) {
      fills(bench, d, plan, "tracer, untraced", false);
      long before = exported.get();
      fills(bench, d, plan, "traced", true);
      bench.progress("%s %s: %d spans exported for the traced fills", SWEEP, path, exported.get() - before);
    } finally {
      provider.close();
    }
  }

  // Sequential fills on one context; {@code traced}: each inside a trace of its own, opened through
  // Vert.x's tracer as a server opens one for a request it receives (an HTTP server's span).
  private static void fills(Bench bench, DeployedDevice d, Plan plan, String variant, boolean traced) throws Exception {
    BufferHandle h = await(d.device.alloc(DType.U8, BYTES));
    List<Histogram> hist = Bench.measure(true, () -> Histograms.sequential(d.vertx, plan, i -> {
      if (!traced) {
        return d.device.fillInteger(h, i & 0x7F);
      }
      // As a request handler runs: on a duplicated context of its own, the request's span current there
      // while the call leaves (dispatched on this thread, no hop added).
      ContextInternal handler = ((ContextInternal) Vertx.currentContext()).duplicate();
      VertxTracer<Object, Object> tracer = handler.tracer();
      Promise<Object> done = Promise.promise();
      handler.dispatch(v -> {
        Object span = tracer.receiveRequest(handler, SpanKind.RPC, TracingPolicy.ALWAYS, "fill", "bench fill",
          Collections.emptyList(), TagExtractor.empty());
        d.device.fillInteger(h, i & 0x7F).onComplete(ar -> {
          tracer.sendResponse(handler, ar.result(), span, ar.cause(), TagExtractor.empty());
          done.handle(ar.map(x -> x));
        });
      });
      return done.future();
    }));
    bench.latency(series(bench, d.path, variant), BYTES, "1 KiB", plan, hist, true);
    await(d.device.free(h));
  }

  private static Series series(Bench bench, String path, String variant) {
    return bench.record.series(SWEEP, path, variant, "latency", "us", "payload", "B");
  }

  /** Counts what it is given and keeps nothing: the cost of spans, not of storing them. */
  private static final class CountingExporter implements SpanExporter {
    private final AtomicLong count;

    CountingExporter(AtomicLong count) {
      this.count = count;
    }

    @Override
    public CompletableResultCode export(Collection<SpanData> spans) {
      count.addAndGet(spans.size());
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode flush() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }
  }
}
