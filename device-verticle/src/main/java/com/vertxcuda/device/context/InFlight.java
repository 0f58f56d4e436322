package com.vertxcuda.device.context;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.Library;
import com.vertxcuda.RequestPhases;
import com.vertxcuda.internal.RequestTrace;
import io.vertx.core.eventbus.DeliveryOptions;
import com.vertxcuda.device.RequestListener;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.device.spi.RequestType;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.Message;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * The one place that owns a device's accepted requests until each has its one answer: the answer
 * may come from any thread (the completion thread, the link's reader, a timeout sweep, context
 * loss, undeploy); the first one wins and goes straight to the requester (an event-bus reply, a
 * local caller's promise, a frame back over the link), the rest are dropped. Every request the
 * toolkit serves is an {@link Entry} of one of these: the device verticle's, and a device host's own.
 *
 * <p>A request sent over a link to a device host also waits for its reply frame ({@link Linked}):
 * its entry stays in the table until both its answer and that frame (or the link's loss) have
 * come, so the frame finds what to release (a slot of the shared region) even after the request
 * was answered by its deadline, and a loss of the link reaches every request on it from here
 * ({@link #failLinked}).
 * Also the in-flight bound and the counters of answers by outcome.
 */
public final class InFlight {

  private final Map<Long, Entry> entries = new ConcurrentHashMap<>();
  /**
   * Entries in the table that clients sent and that count toward maxInFlight: neither the device's
   * own nor those exempt from load (stats, describes, aborts: never turned away, so never counted).
   */
  private final AtomicInteger counted = new AtomicInteger();
  private final AtomicLong ids = new AtomicLong();
  private final LongAdder served = new LongAdder();
  private final Map<FailureCode, LongAdder> failures = new ConcurrentHashMap<>();
  private volatile RequestListener listener;
  private volatile String address;
  /** Whether entries made from now on measure their phases ({@link RequestPhases}). */
  private volatile boolean measure;

  /** Entries made from now on measure where their time goes (queue, stream wait, execution). */
  public void measure(boolean measure) {
    this.measure = measure;
  }

  /**
   * Hears one request's answer beyond the answer itself (its span, a traced local caller): called on
   * the answering thread, once, before the answer leaves; must not block or throw.
   */
  public interface Observer {
    /**
     * @param code the failure, or null when it succeeded
     * @param phases where its time went; null when phases are not measured
     */
    void answered(FailureCode code, RequestPhases phases);
  }

  /** Reports every answer from now on to {@code listener} (null: none), as the device at {@code address}. */
  public void listen(String address, RequestListener listener) {
    this.address = address;
    this.listener = listener;
  }

  /** What a request sent over a link waits for: its reply frame, or the link's loss. Called once. */
  public interface Linked {
    void replied(Object body);

    void failed(CudaException failure);
  }

  /** Where an answer goes: an event-bus message, a local caller's promise, a frame over a link. */
  public interface Answer {
    void succeed(Object body);

    /** {@link #succeed}, with where the request's time went (a device host sends them with its reply frame). */
    default void succeed(Object body, RequestPhases phases) {
      succeed(body);
    }

    void fail(CudaException failure);

    /** The answer to an event-bus message. */
    static Answer of(Message<Object> message) {
      return of(message, false);
    }

    /**
     * The answer to an event-bus message; with {@code phases}, a successful one carries where the
     * request's time went in its {@link RequestTrace#PHASES_HEADER} (its sender asked for them).
     */
    static Answer of(Message<Object> message, boolean phases) {
      return new Answer() {
        @Override
        public void succeed(Object body) {
          message.reply(body);
        }

        @Override
        public void succeed(Object body, RequestPhases measured) {
          if (phases && measured != null) {
            message.reply(body, new DeliveryOptions().addHeader(RequestTrace.PHASES_HEADER, RequestTrace.encode(measured)));
          } else {
            message.reply(body);
          }
        }

        @Override
        public void fail(CudaException failure) {
          message.fail(failure.code().code(), Failures.text(failure));
        }
      };
    }

    /** The answer to a request served by other means (a harness's own): passed on to it as it is. */
    static Answer of(Request r) {
      return new Answer() {
        @Override
        public void succeed(Object body) {
          r.reply(body);
        }

        @Override
        public void fail(CudaException failure) {
          r.fail(failure);
        }
      };
    }

    /** The answer to the device's (or device host's) own request: {@code promise}, on the answering thread. */
    static Answer of(Promise<Object> promise) {
      return new Answer() {
        @Override
        public void succeed(Object body) {
          promise.tryComplete(body);
        }

        @Override
        public void fail(CudaException failure) {
          promise.tryFail(failure);
        }
      };
    }
  }

  /** One accepted request. */
  public final class Entry implements Request {
    private final long id = ids.incrementAndGet();
    private final Object body;
    private final Answer answer;
    private final Library library;
    private final RequestType<?, ?> type;
    private final long deadline;
    private final String owner;
    private final AtomicBoolean answered = new AtomicBoolean();
    /** The link call this request waits for, and the tier that sent it; null when none. */
    private final AtomicReference<Linked> linked = new AtomicReference<>();
    private volatile Object linkedBy;
    private volatile UnaryOperator<Object> finish;
    /** What the entry holds until its answer (bytes of the transfer budget); null when nothing. */
    private volatile Consumer<Object> held;
    /** The device's own request: not counted in flight, served or failed, nor heard by the listener. */
    private volatile boolean own;
    /** Handed to a context (or a pump): a loss of that context answers it ({@link #failSubmitted}). */
    private volatile boolean submitted;
    /** Put in the table once (by {@link #track} or {@link #submitted}, whichever comes first). */
    private volatile boolean inTable;
    // Read once here, so that the answer reads no shared field; no clock read without a listener.
    private volatile RequestListener heard = listener;
    /** Whether this entry measures its phases (the table's choice, or its caller's: {@link #measure()}). */
    private volatile boolean measured = measure;
    private volatile long admitted = heard == null && !measured ? 0 : System.nanoTime();
    /** When the submission thread took it up (its queue phase's end); 0 until then, or unmeasured. */
    private volatile long taken;
    /** The phases a device host measured and sent with its reply frame; null when none. */
    private volatile RequestPhases reported;
    private volatile Observer observer;

    private Entry(Object body, RequestType<?, ?> type, Answer answer, Library library, long deadline, String owner) {
      this.body = body;
      this.type = type;
      this.answer = answer;
      this.library = library;
      this.deadline = deadline;
      this.owner = owner;
    }

    private void heard(FailureCode code, RequestPhases phases) {
      try {
        heard.answered(address, library, code, System.nanoTime() - admitted);
        if (phases != null) {
          heard.phases(address, library, body, code, phases);
        }
      } catch (RuntimeException ignored) {
        // a metrics listener must not cost a request its answer
      }
    }

    /** The submission thread takes the request up now: its queue phase ends (measured entries only). */
    public void taken() {
      if (measured && taken == 0) {
        taken = System.nanoTime();
      }
    }

    /** The phases its device host measured, from the reply frame (before the entry is answered). */
    public void reported(RequestPhases phases) {
      this.reported = phases;
    }

    /** {@code observer} hears this request's answer (set before it can be answered). */
    public Entry observe(Observer observer) {
      this.observer = observer;
      return this;
    }

    /**
     * Measures this entry's phases though the table does not (its caller asked for them): call where
     * it is made, before it is handed on.
     */
    public Entry measure() {
      if (!measured) {
        if (admitted == 0) {
          admitted = System.nanoTime();
        }
        measured = true;
      }
      return this;
    }

    /** Whether the entry measures its phases. */
    public boolean measured() {
      return measured;
    }

    // At the answer, on the answering thread: what this process measured, or what the device host sent.
    private RequestPhases phases() {
      if (!measured) {
        return null;
      }
      RequestPhases p = reported;
      if (p == null) {
        p = new RequestPhases();
        long t = taken;
        if (t != 0) {
          p.setQueueNanos(t - admitted);
        }
        WorkTiming run = WorkTiming.current();
        if (run != null) {
          p.setStreamWaitNanos(run.streamWaitNanos());
          if (library == null) {
            p.setCopyNanos(run.executionNanos());
          } else {
            p.setGpuNanos(run.executionNanos());
          }
        }
      }
      return p.setTotalNanos(System.nanoTime() - admitted);
    }

    // Before the answer leaves: a traced caller reads the phases when its future completes.
    private void observed(FailureCode code, RequestPhases phases) {
      Observer o = observer;
      if (o != null) {
        try {
          o.answered(code, phases);
        } catch (RuntimeException ignored) {
          // a tracer must not cost a request its answer
        }
      }
    }

    @Override
    public Library library() {
      return library;
    }

    @Override
    public RequestType<?, ?> type() {
      return type;
    }

    @Override
    public String owner() {
      return owner;
    }

    @Override
    public Object body() {
      return body;
    }

    @Override
    public long deadline() {
      return deadline;
    }

    /** The entry's id in the table: also its id on a link. */
    public long id() {
      return id;
    }

    /**
     * Marks the entry as sent over {@code link}'s link, whose reply frame (or loss) goes to
     * {@code call}; tracks it until both that and its answer have come.
     */
    public void link(Object link, Linked call) {
      linkedBy = link;
      linked.set(call);
      add();
      if (answered.get() && linked.get() == null) {
        // Answered and unlinked (a loss of the link) between the two lines above: not back in the table.
        remove();
      }
    }

    // The link call, once; the entry leaves the table if it has its answer too.
    private Linked unlink() {
      Linked call = linked.getAndSet(null);
      if (call != null && answered.get()) {
        remove();
      }
      return call;
    }

    // Answered: the entry leaves the table unless a link frame is still due.
    private void settled() {
      if (linked.get() == null) {
        remove();
      }
    }

    /** Answers TIMEOUT if the deadline has passed at {@code now}; says whether it has. */
    public boolean expire(long now) {
      if (now - deadline > 0) {
        fail(FailureCode.TIMEOUT, "no answer within the request's deadline");
        return true;
      }
      return false;
    }

    /** Whether the entry has had its one answer. */
    public boolean answered() {
      return answered.get();
    }

    /** Tracks the entry until its answer (call before it can be answered). */
    public Entry track() {
      add();
      return this;
    }

    /** Tracks the entry (if it is not yet) as handed to a context or a pump: that context's loss answers it. */
    public Entry submitted() {
      submitted = true;
      add();
      return this;
    }

    /**
     * Makes this the device's own request (before it is tracked): in the table like any other, so
     * that losses and link frames reach it, but not counted with clients' requests.
     */
    public Entry own() {
      own = true;
      heard = null;
      return this;
    }

    private void add() {
      if (inTable) {
        return; // admitted, now handed on: one put per request
      }
      inTable = true;
      if (entries.put(id, this) == null && counts()) {
        counted.incrementAndGet();
      }
      if (answered.get()) {
        remove(); // answered before it was tracked (its deadline, a loss): nothing keeps it in the table
      }
    }

    private boolean counts() {
      return !own && (type == null || !type.exemptFromLoad());
    }

    private void remove() {
      if (entries.remove(id) != null && counts()) {
        counted.decrementAndGet();
      }
    }

    /**
     * Hands what the entry holds over at its answer, once: {@code held} gets the successful reply's
     * body, or null for a failure (set before the entry can be answered).
     */
    public Entry holding(Consumer<Object> held) {
      this.held = held;
      return this;
    }

    // At the answer, on the answering thread: what the entry held goes where the answer says.
    private void release(Object reply) {
      Consumer<Object> h = held;
      if (h != null) {
        held = null;
        try {
          h.accept(reply);
        } catch (RuntimeException ignored) {
          // what the entry held must not cost the request its answer
        }
      }
    }

    /** Rewrites the successful reply before it leaves (the device adds its own stats). */
    public Entry finish(UnaryOperator<Object> finish) {
      this.finish = finish;
      return this;
    }

    @Override
    public void reply(Object body) {
      tryReply(body);
    }

    /** {@link #reply}, saying whether this was the entry's answer (false: it had one already). */
    public boolean tryReply(Object body) {
      if (!answered.compareAndSet(false, true)) {
        return false;
      }
      settled();
      release(body);
      if (!own) {
        served.increment(); // before the rewrite: the device's stats count the request that reads them
      }
      UnaryOperator<Object> f = finish;
      Object reply;
      try {
        reply = f == null ? body : f.apply(body);
      } catch (RuntimeException | Error e) {
        // The rewrite failed: the request is still answered, once, with a typed failure.
        if (!own) {
          served.decrement();
        }
        failed(Failures.toCudaException("finishing the reply", e));
        return true;
      }
      RequestPhases phases = phases();
      observed(null, phases);
      if (phases == null) {
        answer.succeed(reply);
      } else {
        answer.succeed(reply, phases);
      }
      if (heard != null) {
        heard(null, phases);
      }
      return true;
    }

    /**
     * Answers with what the device knows of itself (a describe), neither counted among the
     * operations served nor reported to the request listener: describes are how subscribers confirm
     * lifecycle events, and the device's counts and timers are of the work clients asked of it.
     */
    public void describe(Object body) {
      if (answered.compareAndSet(false, true)) {
        settled();
        release(body);
        answer.succeed(body);
      }
    }

    @Override
    public void fail(CudaException failure) {
      if (answered.compareAndSet(false, true)) {
        settled();
        release(null);
        failed(failure);
      }
    }

    // Answered (settled) with a failure: counted, sent, heard.
    private void failed(CudaException failure) {
      if (!own) {
        failures.computeIfAbsent(failure.code(), c -> new LongAdder()).increment();
      }
      RequestPhases phases = phases();
      observed(failure.code(), phases);
      answer.fail(failure);
      if (heard != null) {
        heard(failure.code(), phases);
      }
    }

    public void fail(FailureCode code, String text) {
      fail(new CudaException(code, text));
    }
  }

  /**
   * A new entry for {@code body}, not yet tracked; its deadline on the nanoTime clock, {@code owner}
   * the node that sent it (null: the device's own).
   */
  public Entry entry(Object body, Answer answer, Library library, long deadline, String owner) {
    return new Entry(body, RequestTable.admitted(library, body), answer, library, deadline, owner);
  }

  /** {@link #entry} for a request whose type its caller has looked up already ({@link RequestTable#admitted}). */
  public Entry entry(Object body, RequestType<?, ?> type, Answer answer, Library library, long deadline, String owner) {
    return new Entry(body, type, answer, library, deadline, owner);
  }

  /** Clients' requests admitted and not yet answered (or whose link frame is still due) that count toward maxInFlight. */
  public int size() {
    return counted.get();
  }

  /** The link call of entry {@code id}, taken once (its reply frame came); null when none is due. */
  public Linked linked(long id) {
    return linked(id, null);
  }

  /** {@link #linked(long)}, the reply frame bringing {@code phases}: what its device host measured (null: none). */
  public Linked linked(long id, RequestPhases phases) {
    Entry e = entries.get(id);
    if (e == null) {
      return null;
    }
    if (phases != null) {
      e.reported(phases);
    }
    return e.unlink();
  }

  /**
   * Fails the link call of every entry sent over {@code link}'s link (it is gone) with
   * {@code failure}; returns how many there were.
   */
  public int failLinked(Object link, CudaException failure) {
    int n = 0;
    for (Entry e : new ArrayList<>(entries.values())) {
      if (e.linkedBy == link) {
        Linked call = e.unlink();
        if (call != null) {
          n++;
          call.failed(failure);
        }
      }
    }
    return n;
  }

  /**
   * Answers every tracked client request with {@code code}. The device's own requests are left to
   * the tier they went to, which answers them when it goes (a spare device host's start, sharing
   * this table, is not the loss of the current one).
   */
  public void failAll(FailureCode code, String text) {
    for (Entry e : new ArrayList<>(entries.values())) {
      if (!e.own) {
        e.fail(code, text);
      }
    }
  }

  /** Answers {@code code} to every client's request handed to a context or a pump (its context was lost). */
  public void failSubmitted(FailureCode code, String text) {
    for (Entry e : new ArrayList<>(entries.values())) {
      if (!e.own && e.submitted) {
        e.fail(code, text);
      }
    }
  }

  /** Answers TIMEOUT to every tracked request whose deadline has passed. */
  public void expire(long now) {
    for (Entry e : entries.values()) {
      e.expire(now);
    }
  }

  public long served() {
    return served.sum();
  }

  public Map<String, Long> failuresByCode() {
    Map<String, Long> out = new HashMap<>();
    failures.forEach((code, n) -> out.put(code.name(), n.sum()));
    return out;
  }
}
