package com.vertxcuda.device.spi;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;

import java.util.function.BiFunction;

/**
 * What the device tier knows of one request type, in one place: the body class, what a request of
 * it reads and writes ({@link #footprint}), how the submission thread serves it ({@link #submit})
 * and records it as a pipeline step ({@link #record}), which lane it takes, whether the in-flight
 * limit applies to it, whether clients may send it, and how it crosses the link to a device host.
 * Admission ({@code device.impl.Admission}), the submission loop, the link and the libraries all read
 * these descriptors; adding a request type means adding one.
 *
 * <p>Lane, load exemption, admission and crossing are for the device's own types: admission and the
 * link run where no library is (the parent JVM in process isolation), so a library's types keep
 * the defaults (ordered, under the limit, from clients, in a frame), and registering one that does
 * not is refused.
 *
 * <p>A descriptor is a constant: it is served by a handler ({@code S}: the device's operations, a
 * library verticle) that a context registers with it ({@link LibraryContext#register}), so its
 * functions take that handler as their first argument.
 *
 * @param <S> the handler that serves it
 * @param <T> the body
 */
public final class RequestType<S, T> {

  /** Serves one request on the submission thread ({@link RequestHandler}'s contract for submit). */
  @FunctionalInterface
  public interface Handler<S, T> {
    /**
     * Validates, resolves, orders and queues the request, and arranges its answer (or answers it).
     * Returns null when done, or a {@link Preparation} to run first: the request is then submitted
     * again with the preparation's result as {@code prepared}, once it is ready and every earlier
     * request that touches the same buffers has gone. Anything thrown answers the request through
     * the context's failure mapping.
     */
    Preparation submit(S handler, Request request, T body, Object prepared) throws Exception;
  }

  /** Checks a body as one step of a recorded pipeline. */
  @FunctionalInterface
  public interface Recorder<S, T> {
    /**
     * Checks {@code body} as one step and resolves what it uses, making now, eagerly, whatever its
     * work would otherwise make lazily (a function lookup; what takes long to make, a plan, through a
     * {@link RecordPreparation} instead): the step's work may be issued
     * under CUDA stream capture, where nothing may allocate or synchronise. It may queue work of its
     * own on the step's stream, once (a RAND step's numbers): every replay follows it. Throws a typed
     * failure (BAD_REQUEST for a body that cannot be recorded, naming why), having released what it
     * made.
     */
    RecordedStep record(S handler, T body) throws Exception;
  }

  /**
   * The first part of recording a body whose step needs something made off the submission thread
   * (a plan): checks {@code body} as {@link Recorder#record} does (a typed failure, nothing made) and
   * returns what to make, which runs off the thread as a request's {@link Preparation} does; its
   * result goes to the {@link PreparedRecorder}. On the submission thread.
   */
  @FunctionalInterface
  public interface RecordPreparation<S, T> {
    Preparation prepare(S handler, T body) throws Exception;
  }

  /** The second part: the step, from what the {@link RecordPreparation}'s preparation returned. */
  @FunctionalInterface
  public interface PreparedRecorder<S, T> {
    /**
     * Checks {@code body} again (its buffers may have changed meanwhile) and returns its step, which
     * takes {@code prepared}; on failure it closes {@code prepared} if it is {@link AutoCloseable}.
     */
    RecordedStep record(S handler, T body, Object prepared) throws Exception;
  }

  /** Which of the submission thread's queues a request enters. */
  public enum Lane {
    /** The one ordered queue: the request claims its buffers in the order the device accepted it. */
    ORDERED,
    /** Served before queued work (stats, describe), so an overloaded device still answers at once. */
    CONTROL,
    /** Served on the submission thread outside the order: some earlier request holds its place (a chunk of a copy between devices). */
    BESIDE
  }

  /** What admission does with a request of this type before it reaches the context. */
  public enum Admission {
    /** Handed to the context. */
    QUEUED,
    /** Refused from clients (the bus and the local route): only the device sends it. */
    DEVICE_ONLY,
    /** Answered by admission from what the device knows, without the context. */
    DESCRIBED,
    /** Handed to the context; admission adds the supervisor's counters to the answer. */
    STATS
  }

  /** How a request of this type crosses the link to a device host. */
  public enum Crossing {
    /** As it is, in one request frame. */
    FRAME,
    /** Its bytes through the shared region, the frame naming where they are (an upload). */
    REGION_TO_DEVICE,
    /** Its answer's bytes through the shared region (a download). */
    REGION_TO_HOST,
    /** The frame body that names bytes in the shared region: the device host serves it over its slice. */
    REGION_SLICE
  }

  private final Class<S> handler;
  private final Class<T> body;
  private final BiFunction<S, T, Footprint> footprint;
  private final Handler<S, T> submit;
  private final RecordPreparation<S, T> preparer;
  private final PreparedRecorder<S, T> recorder;
  private final String notRecordable;
  private final Lane lane;
  private final boolean exemptFromLoad;
  private final Admission admission;
  private final Crossing crossing;

  private RequestType(Builder<S, T> b) {
    this.handler = b.handler;
    this.body = b.body;
    this.footprint = b.footprint;
    this.submit = b.submit;
    this.preparer = b.preparer;
    this.recorder = b.recorder;
    this.notRecordable = b.notRecordable;
    this.lane = b.lane;
    this.exemptFromLoad = b.exemptFromLoad;
    this.admission = b.admission;
    this.crossing = b.crossing;
  }

  /** A descriptor of {@code body}s served by a {@code handler}; ordered, under the in-flight limit, from clients, in a frame. */
  public static <S, T> Builder<S, T> of(Class<S> handler, Class<T> body) {
    return new Builder<>(handler, body);
  }

  public Class<T> body() {
    return body;
  }

  public Class<S> handler() {
    return handler;
  }

  public Lane lane() {
    return lane;
  }

  /** Whether the in-flight limit ({@code DeviceOptions.maxInFlight}) never turns it away. */
  public boolean exemptFromLoad() {
    return exemptFromLoad;
  }

  public Admission admission() {
    return admission;
  }

  /** Whether clients may send it (a request only the device makes is refused from them). */
  public boolean fromClients() {
    return admission != Admission.DEVICE_ONLY;
  }

  public Crossing crossing() {
    return crossing;
  }

  /** Whether the submission thread serves it (a type that only crosses the link has no handler). */
  public boolean served() {
    return submit != null;
  }

  /**
   * What a request reads and writes; asked only while an earlier request waits for its preparation.
   * A body that fails its checks here answers {@link Footprint#EVERYTHING}.
   */
  public Footprint footprint(Object handler, Object body) {
    try {
      return footprint.apply(this.handler.cast(handler), this.body.cast(body));
    } catch (RuntimeException e) {
      return Footprint.EVERYTHING;
    }
  }

  /** Serves a request of this type with {@code handler}; on the submission thread. */
  public Preparation submit(Object handler, Request request, Object prepared) throws Exception {
    return submit.submit(this.handler.cast(handler), request, body.cast(request.body()), prepared);
  }

  /**
   * Checks {@code body} as a pipeline step: what its step needs made off the submission thread
   * ({@link RecordPreparation}), or null; BAD_REQUEST, saying why, for a type that cannot be recorded.
   */
  public Preparation prepareRecording(Object handler, Object body) throws Exception {
    if (recorder == null) {
      throw new CudaException(FailureCode.BAD_REQUEST, this.body.getSimpleName() + " cannot be recorded: "
        + notRecordable);
    }
    return preparer == null ? null : preparer.prepare(this.handler.cast(handler), this.body.cast(body));
  }

  /** The step of {@code body}, from what {@link #prepareRecording}'s preparation returned (null: none). */
  public RecordedStep record(Object handler, Object body, Object prepared) throws Exception {
    if (recorder == null) {
      throw new CudaException(FailureCode.BAD_REQUEST, this.body.getSimpleName() + " cannot be recorded: "
        + notRecordable);
    }
    return recorder.record(this.handler.cast(handler), this.body.cast(body), prepared);
  }

  public static final class Builder<S, T> {
    private final Class<S> handler;
    private final Class<T> body;
    private BiFunction<S, T, Footprint> footprint = (s, t) -> Footprint.EVERYTHING;
    private Handler<S, T> submit;
    private RecordPreparation<S, T> preparer;
    private PreparedRecorder<S, T> recorder;
    private String notRecordable = "its requests are not recorded";
    private Lane lane = Lane.ORDERED;
    private boolean exemptFromLoad;
    private Admission admission = Admission.QUEUED;
    private Crossing crossing = Crossing.FRAME;

    private Builder(Class<S> handler, Class<T> body) {
      this.handler = handler;
      this.body = body;
    }

    /** What it reads and writes (unset: everything, so it keeps its place against every request). */
    public Builder<S, T> footprint(BiFunction<S, T, Footprint> footprint) {
      this.footprint = footprint;
      return this;
    }

    /** What it touches, whatever its body says. */
    public Builder<S, T> footprint(Footprint footprint) {
      this.footprint = (s, t) -> footprint;
      return this;
    }

    public Builder<S, T> handler(Handler<S, T> submit) {
      this.submit = submit;
      return this;
    }

    /** Records a body with nothing to make off the submission thread: checked once, at record. */
    public Builder<S, T> recorder(Recorder<S, T> recorder) {
      this.preparer = null;
      this.recorder = (s, t, prepared) -> recorder.record(s, t);
      return this;
    }

    /** Records a body whose step needs something made off the submission thread first (a plan). */
    public Builder<S, T> recorder(RecordPreparation<S, T> prepare, PreparedRecorder<S, T> record) {
      this.preparer = prepare;
      this.recorder = record;
      return this;
    }

    /** Why it cannot be a step of a recorded pipeline (the default: it just is not). */
    public Builder<S, T> notRecordable(String why) {
      this.notRecordable = why;
      return this;
    }

    public Builder<S, T> lane(Lane lane) {
      this.lane = lane;
      return this;
    }

    public Builder<S, T> exemptFromLoad() {
      this.exemptFromLoad = true;
      return this;
    }

    public Builder<S, T> admission(Admission admission) {
      this.admission = admission;
      return this;
    }

    public Builder<S, T> crossing(Crossing crossing) {
      this.crossing = crossing;
      return this;
    }

    public RequestType<S, T> build() {
      return new RequestType<>(this);
    }
  }
}
