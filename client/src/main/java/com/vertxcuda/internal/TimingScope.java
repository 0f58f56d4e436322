package com.vertxcuda.internal;

import com.vertxcuda.RequestTiming;
import io.vertx.core.Context;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The timings of one piece of work a caller times ({@code Timed.measure}), kept in the local data of
 * the context the work runs on (a duplicate of the caller's). {@link RequestSender} asks {@link #of}
 * for each request it sends; while no work is timed anywhere in the JVM that is one read of a counter.
 */
public final class TimingScope {

  /** The local-data key the scope is kept under. */
  private static final Object KEY = TimingScope.class;
  /** Scopes open in this JVM: none, and no context is looked into. */
  private static final AtomicInteger OPEN = new AtomicInteger();

  private final List<RequestTiming> requests = new ArrayList<>();
  private boolean closed;

  /** The scope of work running on {@code context}; null when it is not timed. */
  static TimingScope of(Context context) {
    return OPEN.get() == 0 ? null : VertxInternals.local(context, KEY);
  }

  /**
   * Opens the scope: returns the context the work runs on, a duplicate of {@code caller} (the same
   * thread and order) whose requests are timed into this scope until {@link #close}.
   */
  public Context open(Context caller) {
    OPEN.incrementAndGet();
    return VertxInternals.duplicate(caller, KEY, this);
  }

  /** Records one request's timing (any thread); one that comes after {@link #close} is dropped. */
  synchronized void add(RequestTiming timing) {
    if (!closed) {
      requests.add(timing);
    }
  }

  /** Closes the scope (once): the timings recorded, in the order their answers came. */
  public synchronized List<RequestTiming> close() {
    if (!closed) {
      closed = true;
      OPEN.decrementAndGet();
    }
    return List.copyOf(requests);
  }
}
