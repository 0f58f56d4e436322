package com.vertxcuda.device.impl;

import com.vertxcuda.Addresses;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.RequestPhases;
import com.vertxcuda.device.context.InFlight;
import com.vertxcuda.internal.RequestTrace;
import com.vertxcuda.internal.SpanOutcome;
import com.vertxcuda.internal.VertxInternals;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.spi.tracing.SpanKind;
import io.vertx.core.spi.tracing.TagExtractor;
import io.vertx.core.spi.tracing.VertxTracer;
import io.vertx.core.tracing.TracingPolicy;

import java.util.Map;

/**
 * The span a device reports to its Vert.x's tracer for each request it admits that is part of a
 * trace: a server span under the client's ({@link RequestTrace}; its headers come with the local
 * route's request, or as the event-bus message's headers), from admission to the answer, on a
 * context of its own. Its attributes say where the time went ({@link RequestPhases}: measured where
 * the context runs, in a device host too, whose reply frames carry them back). Span name
 * {@code vertx-cuda.device <operation>}; attributes {@code vertxcuda.operation},
 * {@code vertxcuda.device}, {@code vertxcuda.node}, {@code vertxcuda.library}, and at the end
 * {@code vertxcuda.failure} and the phases ({@link RequestTrace#PHASE_NAMES}). Exists only where
 * a tracer is configured.
 */
final class DeviceSpans {

  /** Device span names start with this. */
  static final String SPAN_PREFIX = "vertx-cuda.device ";

  private final VertxTracer<Object, Object> tracer;
  private final Context eventLoop;
  private final String address;

  private DeviceSpans(VertxTracer<Object, Object> tracer, Context eventLoop, String address) {
    this.tracer = tracer;
    this.eventLoop = eventLoop;
    this.address = address;
  }

  /** The device's spans, or null where its Vert.x has no tracer. */
  static DeviceSpans of(Context eventLoop, String address) {
    VertxTracer<Object, Object> tracer = VertxInternals.tracer(eventLoop);
    return tracer == null ? null : new DeviceSpans(tracer, eventLoop, address);
  }

  /** Whether {@code vertx} has a tracer: then its devices measure each request's phases for their spans. */
  static boolean traced(Vertx vertx) {
    return VertxInternals.tracer(vertx.getOrCreateContext()) != null;
  }

  /** The span of a request from the local route, under {@code trace}'s client span, which gets the phases. */
  void local(InFlight.Entry r, Library library, RequestTrace trace) {
    start(r, library, trace.headers(), trace);
  }

  /** The span of a request from the event bus, under the span its headers carry. */
  void bus(InFlight.Entry r, Library library, Message<Object> message) {
    start(r, library, message.headers().entries(), null);
  }

  private void start(InFlight.Entry r, Library library, Iterable<Map.Entry<String, String>> headers, RequestTrace trace) {
    Span s = new Span(r.body(), library, trace);
    s.context = VertxInternals.spanContext(eventLoop);
    s.span = tracer.receiveRequest(s.context, SpanKind.RPC, TracingPolicy.PROPAGATE, s,
      SPAN_PREFIX + RequestTrace.operation(r.body()), headers, requestTagsOfAny);
    if (s.span != null || trace != null) {
      r.observe(s);
    }
  }

  /** One request's span: ended at its answer, on the answering thread. */
  private final class Span implements InFlight.Observer, SpanOutcome {
    private final Object body;
    private final Library library;
    private final RequestTrace trace;
    private Context context;
    private Object span;
    private FailureCode code;
    private RequestPhases phases;

    Span(Object body, Library library, RequestTrace trace) {
      this.body = body;
      this.library = library;
      this.trace = trace;
    }

    @Override
    public FailureCode failure() {
      return code;
    }

    @Override
    public RequestPhases phases() {
      return phases;
    }

    @Override
    public void answered(FailureCode code, RequestPhases phases) {
      this.code = code;
      this.phases = phases;
      if (trace != null && phases != null) {
        trace.phases(phases);
      }
      if (span != null) {
        tracer.sendResponse(context, this, span, code == null ? null : new CudaException(code, code.name()),
          RequestTrace.OUTCOME_TAGS);
      }
    }
  }

  private static final String[] REQUEST_NAMES = {
    "vertxcuda.operation", "vertxcuda.device", "vertxcuda.node", "vertxcuda.library"
  };

  private final TagExtractor<Span> requestTags = new TagExtractor<>() {
    @Override
    public int len(Span s) {
      return REQUEST_NAMES.length;
    }

    @Override
    public String name(Span s, int i) {
      return REQUEST_NAMES[i];
    }

    @Override
    public String value(Span s, int i) {
      switch (i) {
        case 0: return RequestTrace.operation(s.body);
        case 1: return address;
        case 2: return Addresses.nodeOf(address);
        default: return s.library == null ? "memory" : s.library.suffix();
      }
    }
  };


  @SuppressWarnings({"unchecked", "rawtypes"})
  private final TagExtractor<Object> requestTagsOfAny = (TagExtractor) requestTags;
}
