package com.vertxcuda.device.context;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.device.spi.Footprint;
import com.vertxcuda.device.spi.Preparation;
import com.vertxcuda.device.spi.RecordedStep;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.device.spi.RequestHandler;
import com.vertxcuda.device.spi.RequestType;
import com.vertxcuda.device.spi.RequestType.Admission;
import com.vertxcuda.device.spi.RequestType.Crossing;
import com.vertxcuda.device.spi.RequestType.Lane;
import com.vertxcuda.device.spi.UnreadableRequest;
import com.vertxcuda.internal.CopyInAbort;
import com.vertxcuda.internal.CopyInRequest;
import com.vertxcuda.internal.CopyOutRequest;
import com.vertxcuda.internal.ReclaimRequest;
import com.vertxcuda.message.AllocRequest;
import com.vertxcuda.message.CopyRequest;
import com.vertxcuda.message.DescribeRequest;
import com.vertxcuda.message.DownloadIntoRequest;
import com.vertxcuda.message.DownloadRequest;
import com.vertxcuda.message.FaultRequest;
import com.vertxcuda.message.FillRequest;
import com.vertxcuda.message.FreeRequest;
import com.vertxcuda.message.KeepRequest;
import com.vertxcuda.message.PipelineStep;
import com.vertxcuda.message.RecordRequest;
import com.vertxcuda.message.ReleasePipelineRequest;
import com.vertxcuda.message.ReplayRequest;
import com.vertxcuda.message.StatsRequest;
import com.vertxcuda.message.UploadRequest;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The one table of request types: a {@link RequestType} descriptor per body class. The device's own
 * types are listed here, once ({@link #DEVICE}); each library registers its own through
 * {@link com.vertxcuda.device.spi.LibraryContext#register}. Admission ({@code device.impl.Admission}:
 * who may send it, whether the in-flight limit applies, what it answers itself), the
 * link ({@code ProcessContextTier}, {@code DeviceHostMain}: how it crosses), the submission loop
 * (its lane, its footprint, its handler) and recorded pipelines (its recorder) read it; nothing else
 * dispatches on request types.
 *
 * <p>Static lookups ({@link #admitted}) need no context: they serve admission and the link, which
 * run where no context is (the parent JVM in process isolation). A library's request types are
 * ordered, from clients and cross in a frame, so admission needs none of them. An instance is one
 * context's registrations (which handler serves each library, with its types); it is used on that
 * context's submission thread only.
 */
public final class RequestTable {

  /** What admission and the link assume of a body no descriptor names (every library's): ordered, from clients, in a frame. */
  private static final RequestType<Object, Object> PLAIN = RequestType.of(Object.class, Object.class).build();

  /** A body the wire could not read: every handler answers it the same way. */
  private static final RequestType<Object, UnreadableRequest> UNREADABLE =
    RequestType.of(Object.class, UnreadableRequest.class)
      .handler((any, r, u, p) -> {
        throw new CudaException(FailureCode.BAD_REQUEST, "the request cannot be read: " + u.reason());
      })
      .notRecordable("the request cannot be read")
      .build();

  private static final String HOST_MEMORY = "the host memory it moves lives only as long as the request (record "
    + "uploads from and downloads into transfer buffers instead: PipelineRecorder.upload, PipelineRecorder.download)";
  private static final String CHANGES_USES = "allocations and frees change what the pipeline uses";
  private static final String DEVICE_RECORDS = "the device records fills and device-to-device copies";

  /** The device's own request types, served by the context's {@link DeviceOperations}. */
  static final List<RequestType<?, ?>> DEVICE = List.of(
    device(AllocRequest.class).footprint(Footprint.NONE)
      .handler((d, r, a, p) -> d.memory().alloc(r, a, p)).notRecordable(CHANGES_USES).build(),
    device(FreeRequest.class).footprint((d, f) -> Footprint.builder().write(f.getHandle()).build())
      .handler(done((d, r, f) -> d.memory().free(r, f))).notRecordable(CHANGES_USES).build(),
    // A keep reads its buffer: it waits for a free sent before it (and finds the buffer gone).
    device(KeepRequest.class).footprint((d, k) -> Footprint.builder().read(k.getHandle()).build())
      .handler(done((d, r, k) -> d.memory().keep(r, k))).notRecordable(CHANGES_USES).build(),
    device(ReclaimRequest.class).admission(Admission.DEVICE_ONLY)
      .handler(done((d, r, k) -> d.memory().reclaim(r, k))).notRecordable(CHANGES_USES).build(),
    device(UploadRequest.class).crossing(Crossing.REGION_TO_DEVICE)
      .footprint((d, u) -> Footprint.builder().write(u.getHandle()).build())
      .handler((d, r, u, p) -> d.transfers().upload(r, u, p)).recorder((d, u) -> d.transfers().record(u)).build(),
    device(DownloadRequest.class).crossing(Crossing.REGION_TO_HOST)
      .footprint((d, dl) -> Footprint.builder().read(dl.getHandle()).build())
      .handler((d, r, dl, p) -> d.transfers().download(r, dl, p)).notRecordable(HOST_MEMORY).build(),
    // Only a step of a recorded pipeline: sent alone, it is refused (a download answers its bytes).
    device(DownloadIntoRequest.class).footprint((d, dl) -> Footprint.builder().read(dl.getHandle()).build())
      .handler(done((d, r, dl) -> {
        throw new CudaException(FailureCode.BAD_REQUEST, "a DownloadIntoRequest is a step of a recorded pipeline "
          + "(PipelineRecorder.download), not a request of its own: send a DownloadRequest");
      })).recorder((d, dl) -> d.transfers().record(dl)).build(),
    device(TransferRequest.class).footprint((d, t) -> t.footprint())
      .handler(done((d, r, t) -> d.transfers().transfer(r, t))).recorder((d, t) -> d.transfers().record(t)).build(),
    device(SharedTransfer.class).crossing(Crossing.REGION_SLICE).notRecordable(HOST_MEMORY).build(),
    device(CopyRequest.class).footprint((d, c) -> Footprint.builder().read(c.getSource()).write(c.getTarget()).build())
      .handler(done((d, r, c) -> d.copies().copy(r, c))).recorder((d, c) -> d.copies().record(c)).build(),
    device(FillRequest.class).footprint((d, f) -> Footprint.builder().write(f.getHandle()).build())
      .handler(done((d, r, f) -> d.copies().fill(r, f))).recorder((d, f) -> d.copies().record(f)).build(),
    device(CopyOutRequest.class).footprint((d, c) -> Footprint.builder().read(c.source()).build())
      .handler(done((d, r, c) -> d.copies().copyOut(r, c))).notRecordable(DEVICE_RECORDS).build(),
    device(CopyInRequest.class).footprint((d, c) -> CopyIns.footprint(c))
      .handler(done((d, r, c) -> d.copies().copyIn(r, c))).notRecordable(DEVICE_RECORDS).build(),
    // Its copy holds its place: served beside the order, and never turned away for load (the hold
    // on the target waits for it; refusing it would stall everything queued behind that hold).
    device(CopyInAbort.class).lane(Lane.BESIDE).exemptFromLoad()
      .handler(done((d, r, c) -> d.copies().copyInAbort(r))).notRecordable(DEVICE_RECORDS).build(),
    device(RecordRequest.class).footprint((d, rr) -> d.pipelines().footprint(rr))
      .handler((d, r, rr, p) -> d.pipelines().record(r, rr, p)).notRecordable(DEVICE_RECORDS).build(),
    device(ReplayRequest.class).footprint((d, rr) -> d.pipelines().footprint(rr))
      .handler(done((d, r, rr) -> d.pipelines().replay(r, rr))).notRecordable(DEVICE_RECORDS).build(),
    device(ReleasePipelineRequest.class).footprint((d, rr) -> rr.getPipeline() == null ? Footprint.NONE
        : Footprint.builder().writeKey(Footprint.pipelineKey(rr.getPipeline().id())).build())
      .handler(done((d, r, rr) -> d.pipelines().release(r, rr))).notRecordable(DEVICE_RECORDS).build(),
    // Stats and describe: never turned away for load and served before queued work, so an operator
    // sees an overloaded device at once.
    device(StatsRequest.class).footprint(Footprint.NONE).lane(Lane.CONTROL).exemptFromLoad().admission(Admission.STATS)
      .handler(done((d, r, s) -> r.reply(d.control().stats()))).notRecordable(DEVICE_RECORDS).build(),
    device(DescribeRequest.class).footprint(Footprint.NONE).lane(Lane.CONTROL).exemptFromLoad()
      .admission(Admission.DESCRIBED)
      .handler(done((d, r, s) -> r.reply(d.control().describe()))).notRecordable(DEVICE_RECORDS).build(),
    device(FaultRequest.class)
      .handler(done((d, r, f) -> d.control().fault(r, f))).notRecordable(DEVICE_RECORDS).build());

  private static final Map<Class<?>, RequestType<?, ?>> DEVICE_BY_BODY = index(DEVICE);
  /** Types every handler serves alike. */
  private static final Map<Class<?>, RequestType<?, ?>> EVERY_HANDLER = index(List.of(UNREADABLE));

  /** One handler and the types it serves, or why its library cannot serve anything. */
  static final class Served {
    final RequestHandler handler;
    final Library library;
    final Map<Class<?>, RequestType<?, ?>> types;
    final CudaException refusal;

    /** Whether this serves the device's own {@link #DEVICE} types, the ones admission looks up. */
    private final boolean admittedTypes;

    private Served(Library library, RequestHandler handler, CudaException refusal) {
      this.library = library;
      this.handler = handler;
      List<RequestType<?, ?>> list = handler == null ? List.of() : handler.types();
      this.types = index(list);
      this.admittedTypes = library == null && list == DEVICE;
      this.refusal = refusal;
    }

    /**
     * The descriptor serving {@code r}, or null: for the device's own requests the type admission
     * looked up and the request carries; a library's (which admission knows only as {@link #PLAIN})
     * looked up here.
     */
    RequestType<?, ?> type(Request r) {
      RequestType<?, ?> carried = r.type();
      if (admittedTypes && carried != null && carried != PLAIN) {
        return carried.served() ? carried : null;
      }
      return type(r.body());
    }

    /** The descriptor serving {@code body}, or null. */
    RequestType<?, ?> type(Object body) {
      RequestType<?, ?> t = lookup(types, body);
      if (t == null) {
        t = lookup(EVERY_HANDLER, body);
      }
      return t == null || !t.served() ? null : t;
    }

    Footprint footprint(RequestType<?, ?> type, Object body) {
      return refusal != null ? Footprint.NONE : type == null ? Footprint.EVERYTHING : type.footprint(handler, body);
    }

    /** Serves {@code r} with {@code type} (from {@link #type}); answers a body nobody serves, or a refused library. */
    Preparation submit(RequestType<?, ?> type, Request r, Object prepared) throws Exception {
      if (refusal != null) {
        throw refusal;
      }
      if (type == null) {
        throw notServed(r.body());
      }
      return type.submit(handler, r, prepared);
    }

    /** Checks {@code body} as a step of a recorded pipeline: what its step needs made off the submission thread, or null. */
    Preparation prepareRecording(Object body) throws Exception {
      return recordable(body).prepareRecording(handler, body);
    }

    /** The step of {@code body}, from what {@link #prepareRecording}'s preparation returned (null: none). */
    RecordedStep record(Object body, Object prepared) throws Exception {
      return recordable(body).record(handler, body, prepared);
    }

    private RequestType<?, ?> recordable(Object body) {
      if (refusal != null) {
        throw refusal;
      }
      RequestType<?, ?> type = type(body);
      if (type == null) {
        throw notServed(body);
      }
      return type;
    }

    private CudaException notServed(Object body) {
      return new CudaException(FailureCode.BAD_REQUEST, (library == null ? "the device" : "the " + library.suffix()
        + " library") + " does not serve " + (body == null ? "an empty message" : body.getClass().getSimpleName()));
    }
  }

  private Served device;
  private final Map<Library, Served> libraries = new EnumMap<>(Library.class);

  /** Serves {@code library}'s requests (the device's own for null) with {@code handler}'s types. */
  void register(Library library, RequestHandler handler) {
    Served s = new Served(library, handler, null);
    if (library == null) {
      device = s;
      return;
    }
    for (RequestType<?, ?> t : s.types.values()) {
      if (t.lane() != Lane.ORDERED || t.exemptFromLoad() || t.admission() != Admission.QUEUED
        || t.crossing() != Crossing.FRAME) {
        throw new IllegalArgumentException(t.body().getSimpleName() + ": a library's request types are ordered, "
          + "under the in-flight limit, from clients and cross in a frame (admission and the link know only the device's)");
      }
    }
    libraries.put(library, s);
  }

  /** Answers every request for {@code library} with {@code why} (a library that could not open). */
  void refuse(Library library, CudaException why) {
    libraries.put(library, new Served(library, null, why));
  }

  /** Who serves {@code library} (the device's own operations for null), or null. */
  Served served(Library library) {
    return library == null ? device : libraries.get(library);
  }

  List<Library> libraries() {
    return new ArrayList<>(libraries.keySet());
  }

  /**
   * The descriptor admission and the link go by for a request of {@code library} with {@code body}:
   * the device's own type, or, for any other (every library's), an ordered type from clients that
   * crosses in a frame. A describe is the device's at every one of its addresses: answered at
   * admission after what the sender sent that address before, it is the barrier a remote caller's
   * bulk stream waits behind ({@code BulkTransfer}). Any thread.
   */
  public static RequestType<?, ?> admitted(Library library, Object body) {
    RequestType<?, ?> t = library == null || body instanceof DescribeRequest ? lookup(DEVICE_BY_BODY, body) : null;
    return t != null ? t : PLAIN;
  }

  /**
   * Whether a recording has a step that names host memory of this JVM (an upload from or a download
   * into a transfer buffer): such a step crosses to a device host as the slice of the shared region
   * the buffer lies in, not as its bytes ({@code SharedTransfers.record}). Any thread.
   */
  public static boolean namesHostMemory(RecordRequest rr) {
    if (rr.getSteps() == null) {
      return false;
    }
    for (PipelineStep s : rr.getSteps()) {
      if (s != null && s.library() == null && (s.body() instanceof UploadRequest || s.body() instanceof DownloadIntoRequest)) {
        return true;
      }
    }
    return false;
  }

  /** {@link #admitted} for a request. */
  public static RequestType<?, ?> admitted(Request r) {
    return admitted(r.library(), r.body());
  }

  private static RequestType<?, ?> lookup(Map<Class<?>, RequestType<?, ?>> types, Object body) {
    if (body == null) {
      return null;
    }
    for (Class<?> c = body.getClass(); c != null; c = c.getSuperclass()) {
      RequestType<?, ?> t = types.get(c);
      if (t != null) {
        return t;
      }
    }
    return null;
  }

  private static Map<Class<?>, RequestType<?, ?>> index(List<RequestType<?, ?>> types) {
    Map<Class<?>, RequestType<?, ?>> byBody = new HashMap<>();
    for (RequestType<?, ?> t : types) {
      if (byBody.put(t.body(), t) != null) {
        throw new IllegalArgumentException("two descriptors for " + t.body().getName());
      }
    }
    return Map.copyOf(byBody);
  }

  private static <T> RequestType.Builder<DeviceOperations, T> device(Class<T> body) {
    return RequestType.of(DeviceOperations.class, body);
  }

  /** A device handler that answers (or arranges the answer) and needs no preparation. */
  @FunctionalInterface
  private interface Now<T> {
    void serve(DeviceOperations d, Request r, T body) throws Exception;
  }

  private static <T> RequestType.Handler<DeviceOperations, T> done(Now<T> now) {
    return (d, r, body, prepared) -> {
      now.serve(d, r, body);
      return null;
    };
  }
}
