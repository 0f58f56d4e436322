package com.vertxcuda.device.impl;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.Library;
import com.vertxcuda.device.RequestListener;
import com.vertxcuda.device.spi.Request;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.Message;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.UnaryOperator;

/**
 * The one place that owns a device's accepted requests until each has its one answer: the answer
 * may come from any thread (the completion thread, the link's reader, a timeout sweep, context
 * loss, undeploy); the first one wins and goes straight to the requester (an event-bus reply, or a
 * local caller's promise), the rest are dropped.
 * Also the in-flight bound and the counters of answers by outcome.
 */
public final class InFlight {

  private final Map<Long, Entry> entries = new ConcurrentHashMap<>();
  private final AtomicLong ids = new AtomicLong();
  private final LongAdder served = new LongAdder();
  private final Map<FailureCode, LongAdder> failures = new ConcurrentHashMap<>();
  private volatile RequestListener listener;
  private volatile String address;

  /** Reports every answer from now on to {@code listener} (null: none), as the device at {@code address}. */
  public void listen(String address, RequestListener listener) {
    this.address = address;
    this.listener = listener;
  }

  /** Where an answer goes: an event-bus message, or a local caller's promise. */
  public interface Answer {
    void succeed(Object body);

    void fail(CudaException failure);

    /** The answer to an event-bus message. */
    static Answer of(Message<Object> message) {
      return new Answer() {
        @Override
        public void succeed(Object body) {
          message.reply(body);
        }

        @Override
        public void fail(CudaException failure) {
          message.fail(failure.code().code(), Failures.text(failure));
        }
      };
    }

    /**
     * The answer to a local caller: {@code promise} completes on {@code caller}, the caller's
     * context, in a task of its own, so never on the stack of whoever answers (a refusal is answered
     * on the caller's own thread).
     */
    static Answer of(Promise<Object> promise, io.vertx.core.Context caller) {
      return new Answer() {
        @Override
        public void succeed(Object body) {
          caller.runOnContext(v -> promise.complete(body));
        }

        @Override
        public void fail(CudaException failure) {
          caller.runOnContext(v -> promise.fail(failure));
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
    private final long deadline;
    private final String owner;
    private final AtomicBoolean answered = new AtomicBoolean();
    private volatile UnaryOperator<Object> finish;
    // Read once here, so that the answer reads no shared field; no clock read without a listener.
    private final RequestListener heard = listener;
    private final long admitted = heard == null ? 0 : System.nanoTime();

    private Entry(Object body, Answer answer, Library library, long deadline, String owner) {
      this.body = body;
      this.answer = answer;
      this.library = library;
      this.deadline = deadline;
      this.owner = owner;
    }

    private void heard(FailureCode code) {
      try {
        heard.answered(address, library, code, System.nanoTime() - admitted);
      } catch (RuntimeException ignored) {
        // a metrics listener must not cost a request its answer
      }
    }

    @Override
    public Library library() {
      return library;
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

    /** Whether the entry has had its one answer. */
    public boolean answered() {
      return answered.get();
    }

    /** Tracks the entry until its answer (call before it can be answered). */
    public Entry track() {
      entries.put(id, this);
      return this;
    }

    /** Rewrites the successful reply before it leaves (the device adds its own stats). */
    public Entry finish(UnaryOperator<Object> finish) {
      this.finish = finish;
      return this;
    }

    @Override
    public void reply(Object body) {
      if (answered.compareAndSet(false, true)) {
        entries.remove(id);
        served.increment();
        UnaryOperator<Object> f = finish;
        answer.succeed(f == null ? body : f.apply(body));
        if (heard != null) {
          heard(null);
        }
      }
    }

    /**
     * Answers with what the device knows of itself (a describe), neither counted among the
     * operations served nor reported to the request listener: describes are how subscribers confirm
     * lifecycle events, and the device's counts and timers are of the work clients asked of it.
     */
    public void describe(Object body) {
      if (answered.compareAndSet(false, true)) {
        entries.remove(id);
        answer.succeed(body);
      }
    }

    @Override
    public void fail(CudaException failure) {
      if (answered.compareAndSet(false, true)) {
        entries.remove(id);
        failures.computeIfAbsent(failure.code(), c -> new LongAdder()).increment();
        answer.fail(failure);
        if (heard != null) {
          heard(failure.code());
        }
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
    return new Entry(body, answer, library, deadline, owner);
  }

  public int size() {
    return entries.size();
  }

  /** Answers every tracked request with {@code code}. */
  public void failAll(FailureCode code, String text) {
    for (Entry e : new ArrayList<>(entries.values())) {
      e.fail(code, text);
    }
  }

  /** Answers TIMEOUT to every tracked request whose deadline has passed. */
  public void expire(long now) {
    for (Entry e : entries.values()) {
      if (now - e.deadline > 0) {
        e.fail(FailureCode.TIMEOUT, "no answer within the request's deadline");
      }
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

  /** Requests tracked now (for tests). */
  List<Entry> tracked() {
    return new ArrayList<>(entries.values());
  }
}
