package com.vertxcuda.internal;

import com.vertxcuda.Addresses;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.RequestPhases;
import com.vertxcuda.RequestTiming;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.message.AllocRequest;
import com.vertxcuda.message.CopyRequest;
import com.vertxcuda.message.DownloadRequest;
import com.vertxcuda.message.FillRequest;
import com.vertxcuda.message.UploadRequest;
import io.vertx.core.Context;
import io.vertx.core.spi.tracing.SpanKind;
import io.vertx.core.spi.tracing.TagExtractor;
import io.vertx.core.spi.tracing.VertxTracer;
import io.vertx.core.tracing.TracingPolicy;

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One typed request as Vert.x's tracer sees it: the client span {@link RequestSender} starts and ends
 * on the caller's context ({@code VertxTracer.sendRequest} / {@code receiveResponse}, as Vert.x's SQL,
 * Redis and web clients report theirs), the propagation headers that make the device's span its child
 * (on the event bus as message headers, on the local route with the request), and the device's
 * answer: its failure code and, from a device served in this JVM, where its time went. Made only
 * when a tracer is configured; without one nothing of this exists on a request's path.
 *
 * <p>Span name {@code vertx-cuda <operation>}; attributes: {@code vertxcuda.operation},
 * {@code vertxcuda.device} (address), {@code vertxcuda.node}, and of the request's main buffer
 * {@code vertxcuda.dtype}, {@code vertxcuda.elements}, {@code vertxcuda.bytes},
 * {@code vertxcuda.generation}; at the end {@code vertxcuda.failure} (the failure code) and, where
 * measured, the phases in ns ({@code vertxcuda.queue_ns}, {@code vertxcuda.stream_wait_ns},
 * {@code vertxcuda.gpu_ns}, {@code vertxcuda.copy_ns}, {@code vertxcuda.device_ns}).
 */
public final class RequestTrace implements SpanOutcome {

  /** Span names start with this. */
  public static final String SPAN_PREFIX = "vertx-cuda ";

  private final Object body;
  private final String address;
  private final String operation;
  private final List<Map.Entry<String, String>> headers = new ArrayList<>(2);
  private Object span;
  /** Set by the device at the answer (local route), read on the caller's context after it. */
  private volatile RequestPhases phases;
  private FailureCode failure;

  /** Whether the caller times this request ({@link TimingScope}): the device sends its phases back. */
  private final boolean timed;

  RequestTrace(Object body, String address, boolean timed) {
    this.body = body;
    this.address = address;
    this.operation = operation(body);
    this.timed = timed;
  }

  /**
   * Starts the client span of {@code body} to {@code address} on {@code context}, child of the
   * context's current span ({@code tracer} null: none); null when there is no span (no tracer, or no
   * current trace under its policy) and the request is not {@code timed}.
   */
  static RequestTrace start(VertxTracer<Object, Object> tracer, Context context, Object body, String address,
                            boolean timed) {
    RequestTrace t = new RequestTrace(body, address, timed);
    if (tracer != null) {
      t.span = tracer.sendRequest(context, SpanKind.RPC, TracingPolicy.PROPAGATE, t, SPAN_PREFIX + t.operation,
        (k, v) -> t.headers.add(new AbstractMap.SimpleImmutableEntry<>(k, v)), REQUEST_TAGS);
    }
    return t.span == null && !timed ? null : t;
  }

  /** Ends the client span (if any) on the caller's context, with the answer's failure code, if any. */
  void end(VertxTracer<Object, Object> tracer, Context context, Throwable failure) {
    if (failure != null) {
      this.failure = Failures.toCudaException(failure).code();
    }
    if (span != null) {
      tracer.receiveResponse(context, this, span, failure, OUTCOME_TAGS);
    }
  }

  /** Whether the request has a client span (its headers carry it to the device). */
  public boolean traced() {
    return span != null;
  }

  /** Whether the caller times the request: the device measures it and sends its phases back. */
  public boolean timed() {
    return timed;
  }

  /** What the caller who times it is told (after {@link #end}). */
  RequestTiming timing() {
    return new RequestTiming(operation, address, failure, phases);
  }

  /**
   * The header that asks the device to send a request's phases back with its answer (any value), and
   * carries them on the reply: queue, stream wait, GPU, copy and total ns, comma-separated.
   */
  public static final String PHASES_HEADER = "vertx-cuda-phases";

  /** {@code p} as the reply's {@link #PHASES_HEADER} carries it. */
  public static String encode(RequestPhases p) {
    return p.getQueueNanos() + "," + p.getStreamWaitNanos() + "," + p.getGpuNanos() + "," + p.getCopyNanos()
      + "," + p.getTotalNanos();
  }

  /** The phases a reply's {@link #PHASES_HEADER} carries; null for none or a malformed one. */
  public static RequestPhases decode(String header) {
    if (header == null) {
      return null;
    }
    String[] v = header.split(",", -1);
    if (v.length != 5) {
      return null;
    }
    try {
      return new RequestPhases().setQueueNanos(Long.parseLong(v[0])).setStreamWaitNanos(Long.parseLong(v[1]))
        .setGpuNanos(Long.parseLong(v[2])).setCopyNanos(Long.parseLong(v[3])).setTotalNanos(Long.parseLong(v[4]));
    } catch (NumberFormatException e) {
      return null;
    }
  }

  @Override
  public FailureCode failure() {
    return failure;
  }

  @Override
  public RequestPhases phases() {
    return phases;
  }

  /** The headers that carry the client span to the device (W3C trace context, or the tracer's own). */
  public List<Map.Entry<String, String>> headers() {
    return headers;
  }

  /** The request's operation: a library call's name ("gemm"), else the request's ("upload", "fill"). */
  public String operation() {
    return operation;
  }

  /** What the device measured of this request (a device served in this JVM sets it before it answers). */
  public void phases(RequestPhases phases) {
    this.phases = phases;
  }

  /** The operation a request body stands for, as spans and timers name it. */
  public static String operation(Object body) {
    if (body instanceof BlasRequest) {
      return BLAS_OPS[((BlasRequest) body).getOp().ordinal()];
    }
    return OPERATIONS.get(body.getClass());
  }

  // Names made once per class and op: a measured request's answer allocates no name.
  private static final String[] BLAS_OPS = java.util.Arrays.stream(com.vertxcuda.blas.BlasOp.values())
    .map(op -> op.name().toLowerCase()).toArray(String[]::new);

  private static final ClassValue<String> OPERATIONS = new ClassValue<>() {
    @Override
    protected String computeValue(Class<?> type) {
      String name = type.getSimpleName();
      if (name.endsWith("Request")) {
        name = name.substring(0, name.length() - "Request".length());
      }
      return name.toLowerCase();
    }
  };

  // The buffer a request is about (what it writes, else what it reads), for its attributes.
  private static BufferHandle mainBuffer(Object body) {
    if (body instanceof UploadRequest) {
      return ((UploadRequest) body).getHandle();
    }
    if (body instanceof DownloadRequest) {
      return ((DownloadRequest) body).getHandle();
    }
    if (body instanceof FillRequest) {
      return ((FillRequest) body).getHandle();
    }
    if (body instanceof CopyRequest) {
      return ((CopyRequest) body).getTarget();
    }
    if (body instanceof BlasRequest) {
      BlasRequest b = (BlasRequest) body;
      return b.getC() != null ? b.getC() : b.getY() != null ? b.getY() : b.getA();
    }
    return null;
  }

  private static final String[] REQUEST_NAMES = {
    "vertxcuda.operation", "vertxcuda.device", "vertxcuda.node",
    "vertxcuda.dtype", "vertxcuda.elements", "vertxcuda.bytes", "vertxcuda.generation"
  };

  private static final TagExtractor<RequestTrace> REQUEST_TAGS_TYPED = new TagExtractor<>() {
    @Override
    public int len(RequestTrace t) {
      return mainBuffer(t.body) != null || t.body instanceof AllocRequest ? REQUEST_NAMES.length : 3;
    }

    @Override
    public String name(RequestTrace t, int i) {
      return REQUEST_NAMES[i];
    }

    @Override
    public String value(RequestTrace t, int i) {
      switch (i) {
        case 0: return t.operation;
        case 1: return t.address;
        case 2: return Addresses.nodeOf(t.address);
        default: break;
      }
      BufferHandle h = mainBuffer(t.body);
      DType dtype;
      long elements;
      if (h != null) {
        dtype = h.dtype();
        elements = h.length();
      } else {
        AllocRequest a = (AllocRequest) t.body;
        dtype = a.getDtype();
        elements = a.getCount();
      }
      switch (i) {
        case 3: return String.valueOf(dtype);
        case 4: return Long.toString(elements);
        case 5: return dtype == null ? "" : Long.toString(dtype.bytes(elements));
        default: return h == null ? "" : Long.toString(h.generation());
      }
    }
  };

  /** The attributes a span ends with ({@link SpanOutcome}): {@code vertxcuda.failure}, then the phases. */
  private static final TagExtractor<SpanOutcome> OUTCOME_TAGS_TYPED = new TagExtractor<>() {
    @Override
    public int len(SpanOutcome o) {
      return (o.failure() != null ? 1 : 0) + (o.phases() != null ? PHASE_NAMES.length : 0);
    }

    @Override
    public String name(SpanOutcome o, int i) {
      int phase = o.failure() != null ? i - 1 : i;
      return phase < 0 ? "vertxcuda.failure" : PHASE_NAMES[phase];
    }

    @Override
    public String value(SpanOutcome o, int i) {
      int phase = o.failure() != null ? i - 1 : i;
      return phase < 0 ? o.failure().name() : Long.toString(phase(o.phases(), phase));
    }
  };

  /** The attribute names of the phases, in the order {@link #phase} reads them. */
  public static final String[] PHASE_NAMES = {
    "vertxcuda.queue_ns", "vertxcuda.stream_wait_ns", "vertxcuda.gpu_ns", "vertxcuda.copy_ns", "vertxcuda.device_ns"
  };

  /** Phase {@code i} of {@code p} in the order of {@link #PHASE_NAMES}. */
  public static long phase(RequestPhases p, int i) {
    switch (i) {
      case 0: return p.getQueueNanos();
      case 1: return p.getStreamWaitNanos();
      case 2: return p.getGpuNanos();
      case 3: return p.getCopyNanos();
      default: return p.getTotalNanos();
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static final TagExtractor<Object> REQUEST_TAGS = (TagExtractor) REQUEST_TAGS_TYPED;
  /** {@link #OUTCOME_TAGS_TYPED} for the tracer's untyped calls: the response passed is a {@link SpanOutcome}. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public static final TagExtractor<Object> OUTCOME_TAGS = (TagExtractor) OUTCOME_TAGS_TYPED;
}
