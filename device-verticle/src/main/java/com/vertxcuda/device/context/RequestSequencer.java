package com.vertxcuda.device.context;

import io.vertx.core.eventbus.Message;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;

/**
 * Makes the order in which the device verticle forwarded requests the order in which they claim
 * their buffers in {@link StreamOrdering}, across the context and every library verticle, so work
 * sent without waiting (a GEMM, then an FFT of its output, then a download) runs in the order sent.
 *
 * <p>The device verticle numbers each request it forwards to a generation (header
 * {@value #HEADER}, from 1). A verticle {@link #enter}s before it resolves and orders a request and
 * is {@link #done} once the request's work is queued (or it failed); a verticle that holds a request
 * back (a GEMM waiting for its batch) {@link #hold}s it, and only its own later requests may pass.
 * A number that never arrives stops nobody for more than {@link #WAIT_LIMIT_MILLIS}.
 */
public final class RequestSequencer {

  /** The header carrying a request's sequence number. */
  public static final String HEADER = "vertx-cuda-seq";
  /** How long a request waits for an earlier one that may never come. */
  public static final long WAIT_LIMIT_MILLIS = 2_000;

  private static final System.Logger LOG = System.getLogger(RequestSequencer.class.getName());

  private long next = 1;
  private final TreeSet<Long> doneAhead = new TreeSet<>();
  private final Map<Long, Object> held = new HashMap<>();

  /** A message's sequence number, or 0 when it has none (internal requests). */
  public static long of(Message<?> m) {
    String s = m.headers().get(HEADER);
    return s == null ? 0 : Long.parseLong(s);
  }

  /** Waits until every request numbered before {@code seq} is done, or held by {@code owner}. */
  public synchronized void enter(long seq, Object owner) {
    if (seq <= 0) {
      return;
    }
    long deadline = System.currentTimeMillis() + WAIT_LIMIT_MILLIS;
    while (!ready(seq, owner)) {
      long left = deadline - System.currentTimeMillis();
      if (left <= 0) {
        LOG.log(System.Logger.Level.WARNING, "request #" + next + " never reached its verticle; #" + seq + " goes on");
        for (long s = next; s < seq; s++) {
          if (!held.containsKey(s)) {
            doneAhead.add(s);
          }
        }
        advance();
        return;
      }
      try {
        wait(left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** {@code seq} is held back by {@code owner}: its later requests may pass it, no one else's. */
  public synchronized void hold(long seq, Object owner) {
    if (seq >= next && !doneAhead.contains(seq)) {
      held.put(seq, owner);
      notifyAll();
    }
  }

  /** {@code seq} has claimed its buffers (its work is queued) or failed. */
  public synchronized void done(long seq) {
    if (seq <= 0) {
      return;
    }
    held.remove(seq);
    if (seq >= next) {
      doneAhead.add(seq);
    }
    advance();
    notifyAll();
  }

  private void advance() {
    while (doneAhead.remove(next)) {
      next++;
    }
    doneAhead.headSet(next).clear();
  }

  private boolean ready(long seq, Object owner) {
    if (seq <= next) {
      return true; // every earlier request is done: the usual case
    }
    for (long s = next; s < seq; s++) {
      if (!doneAhead.contains(s) && held.get(s) != owner) {
        return false;
      }
    }
    return true;
  }
}
