package com.vertxcuda.impl;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.DeviceState;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Handler;

import java.util.EnumMap;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The lifecycle events of one device that its subscriber may act on. Anything on the bus can publish
 * to an events address, so an event is only a reason to ask the device ({@code describe}, a request
 * only the device answers); what is delivered is the transition the device's answer shows, from the
 * generation this subscriber knows, and only when an event of that type was offered. The event's
 * type and reason are the publisher's word; its generations are the device's.
 *
 * <p>Cheap to flood: an event that names a generation older than the newest known, or a transition
 * already delivered, is dropped without a describe; at most one describe is out at a time, and every
 * event offered while it is out merges into it (judged by its answer). The device publishes its
 * events and answers describes from its own event loop over one ordered channel, so an event of its
 * own that reached the subscriber before the answer is one the answer already reflects.
 *
 * <p>Each transition reaches the subscriber once: a generation is announced once (READY or
 * GENERATION_CHANGED), LOST once, REMOVED once, and never for a device this subscriber has not seen
 * alive. On the subscriber's context only (the consumer's handler).
 */
public final class TrustedEvents {

  /** What this subscriber knows of the device at generation {@link #known}. */
  private enum Phase {
    /** Nothing confirmed: no answer yet, or the device did not answer. */
    UNSEEN,
    /** Starting at {@code known}: its READY is still to come. */
    STARTING,
    /** Serving at {@code known} (announced, or serving when the subscription began). */
    SERVING,
    /** LOST at {@code known}: a device that is lost stays lost until it is undeployed. */
    LOST,
    /** Undeployed: it serves nothing until deployed again, at a newer generation. */
    GONE
  }

  private final String node;
  private final int device;
  private final Supplier<Future<DeviceInfo>> describe;
  private final Handler<DeviceEvent> handler;
  private final AtomicLong dropped;
  private final Runnable gone;
  /** The newest generation the device confirmed to this subscriber. */
  private long known;
  private Phase phase = Phase.UNSEEN;
  /** Whether the starting point is known: until then, offered events wait. */
  private boolean started;
  private boolean asking;
  /** The first event of each type offered since the last answer: its reason is the one delivered. */
  private final EnumMap<DeviceEvent.Type, DeviceEvent> offered = new EnumMap<>(DeviceEvent.Type.class);
  /** The lowest new generation offered per type since the last answer. */
  private final EnumMap<DeviceEvent.Type, Long> lowest = new EnumMap<>(DeviceEvent.Type.class);
  /** How many offered events merged into the answer awaited. */
  private long merged;
  /** Events held for this device while it was being listed, offered after the first answer; or null. */
  private List<DeviceEvent> afterFirstAnswer;
  /** The READY kept from the last answer for one more question, or null. */
  private DeviceEvent retriedReady;
  /** The REMOVED kept from the last answer for one more question, or null. */
  private DeviceEvent retriedRemoved;
  /** A READY the watcher's listing suggests, judged with the next answer like an offered one but not counted. */
  private boolean listed;

  /**
   * @param node     the node of the device, named in each event delivered
   * @param device   the device's index on its node
   * @param describe asks the device for its state and generation
   * @param dropped  where events that are not delivered are counted
   * @param gone     run when the device is confirmed gone: its REMOVED delivered, or no answer at its
   *                 address although it was never seen alive; nothing of it is worth keeping after
   */
  public TrustedEvents(String node, int device, Supplier<Future<DeviceInfo>> describe, Handler<DeviceEvent> handler,
                       AtomicLong dropped, Runnable gone) {
    this.node = node;
    this.device = device;
    this.describe = describe;
    this.handler = handler;
    this.dropped = dropped;
    this.gone = gone;
  }

  /** The newest generation confirmed so far. */
  public long known() {
    return known;
  }

  /** Whether the device was serving at the generation known (announced or found so), not since lost or gone. */
  public boolean serving() {
    return phase == Phase.SERVING;
  }

  /**
   * Starts from the device's own answer to a describe sent when the subscription began; a failed one
   * means it was not there. Events offered meanwhile wait for it, so none is judged against an older
   * state.
   */
  public void startFrom(Future<DeviceInfo> answer) {
    answer.onComplete(ar -> {
      if (ar.succeeded() && ar.result() != null && ar.result().getState() != null) {
        DeviceInfo d = ar.result();
        switch (d.getState()) {
          case READY -> at(d.getGeneration(), Phase.SERVING);
          case LOST -> at(d.getGeneration(), Phase.LOST);
          case STARTING -> at(d.getGeneration(), Phase.STARTING);
          // Its generation bumped, its GENERATION_CHANGED still to come.
          case REBUILDING -> at(d.getGeneration() - 1, Phase.SERVING);
          case STOPPED -> at(d.getGeneration(), Phase.GONE);
        }
      }
      started = true;
      askIfOffered();
    });
  }

  /** Judges {@code e}: dropped at once if it cannot be news, else merged into the next answer. */
  public void offer(DeviceEvent e) {
    if (!news(e)) {
      dropped.incrementAndGet();
      return;
    }
    offered.putIfAbsent(e.getType(), e);
    lowest.merge(e.getType(), e.getNewGeneration(), Math::min);
    merged++;
    askIfOffered();
  }

  /**
   * Starts a device first seen in the registry's listing, serving at {@code generation} by the
   * listing's word: announced READY if its own answer agrees.
   */
  public void startListed(long generation) {
    startListed(generation, List.of());
  }

  /**
   * As {@link #startListed(long)}, with the events for this device that came while the listing was
   * out (the watcher followed it only once the listing answered): they are offered once the first
   * answer is in and only if it confirmed the device, so one that came after the listing was read (a
   * REMOVED) is judged against a later answer, not against the one that confirms the device serves.
   */
  public void startListed(long generation, List<DeviceEvent> heldWhileListing) {
    lowest.merge(DeviceEvent.Type.READY, generation, Math::min);
    listed = true;
    started = true;
    afterFirstAnswer = heldWhileListing.isEmpty() ? null : heldWhileListing;
    askIfOffered();
  }

  /** Delivers a LOST raised on this node for the generation known (its node left: it can confirm nothing). */
  public void deliverLocal(String reason) {
    if (phase == Phase.STARTING || phase == Phase.SERVING) {
      phase = Phase.LOST;
      handler.handle(event(DeviceEvent.Type.LOST, known, known, reason));
    }
  }

  /** Whether {@code e} could tell this subscriber anything it does not know. */
  private boolean news(DeviceEvent e) {
    long n = e.getNewGeneration();
    if (n < known) {
      return false;
    }
    return switch (e.getType()) {
      case GENERATION_CHANGED -> n > known && n > e.getOldGeneration() && (phase == Phase.SERVING || phase == Phase.UNSEEN);
      // The device publishes these with one generation, old and new.
      case READY -> e.getOldGeneration() == n && (n > known || phase == Phase.STARTING || phase == Phase.UNSEEN);
      case LOST -> e.getOldGeneration() == n && (n > known || phase != Phase.LOST && phase != Phase.GONE);
      case REMOVED -> e.getOldGeneration() == n && phase != Phase.UNSEEN && phase != Phase.GONE;
    };
  }

  private void askIfOffered() {
    if (!started || asking || merged == 0 && !listed) {
      return;
    }
    asking = true;
    describe.get().onComplete(ar -> {
      asking = false;
      judge(ar);
      List<DeviceEvent> held = afterFirstAnswer;
      afterFirstAnswer = null;
      if (held != null && phase != Phase.UNSEEN) {
        held.forEach(this::offer);
      }
      askIfOffered();
    });
  }

  /** Delivers the transition the device's answer shows, if an event of that type was offered. */
  private void judge(AsyncResult<DeviceInfo> ar) {
    long knownBefore = known;
    DeviceEvent delivered = null;
    DeviceEvent removedFirst = null;
    if (ar.failed()) {
      // A device that no longer answers at its address is gone.
      if (ar.cause() instanceof CudaException && ((CudaException) ar.cause()).code() == FailureCode.CONTEXT_LOST) {
        if (phase == Phase.UNSEEN) {
          gone.run();
        } else if (phase != Phase.GONE && offered(DeviceEvent.Type.REMOVED, Long.MAX_VALUE)) {
          delivered = removed(known);
        }
      }
    } else if (ar.result() != null && ar.result().getState() != null) {
      DeviceState s = ar.result().getState();
      long m = ar.result().getGeneration();
      removedFirst = redeployed(s, m);
      delivered = transition(s, m);
    }
    // A new incarnation already serving, its READY not offered yet (it is published once its registry
    // entry is written, which can be after the device answers): the REMOVED offered waits for it.
    boolean removedWaits = removedFirst == null && delivered == null && ar.succeeded() && ar.result() != null
      && ar.result().getState() == DeviceState.READY && ar.result().getGeneration() > known
      && offered(DeviceEvent.Type.REMOVED, Long.MAX_VALUE);
    DeviceEvent removedOffer = removedWaits ? offered.get(DeviceEvent.Type.REMOVED) : null;
    Long removedLowest = removedWaits ? lowest.get(DeviceEvent.Type.REMOVED) : null;
    // A READY the answer could not confirm yet (no device answered, or one of an older generation:
    // the question left before the new incarnation served, as when a redeployment follows the
    // REMOVED being asked about) is asked about once more, and only once, so a forged one costs at
    // most one more question.
    Long readyLowest = lowest.get(DeviceEvent.Type.READY);
    DeviceEvent readyOffer = offered.get(DeviceEvent.Type.READY);
    boolean readyWaits = readyOffer != null && readyOffer != retriedReady
      && (delivered == null || delivered.getType() != DeviceEvent.Type.READY)
      && (ar.failed() || ar.result() == null || ar.result().getGeneration() < readyLowest);
    // Likewise a REMOVED offered while the device still answered serving at the generation known
    // (the question left before it stopped): asked about once more, and only once.
    DeviceEvent removedRetry = offered.get(DeviceEvent.Type.REMOVED);
    boolean removedRetries = removedRetry != null && !removedWaits && removedRetry != retriedRemoved
      && removedFirst == null && (delivered == null || delivered.getType() != DeviceEvent.Type.REMOVED)
      && ar.succeeded() && ar.result() != null && ar.result().getGeneration() == knownBefore
      && (ar.result().getState() == DeviceState.READY || ar.result().getState() == DeviceState.STARTING);
    Long removedRetryLowest = removedRetries ? lowest.get(DeviceEvent.Type.REMOVED) : null;
    dropped.addAndGet(Math.max(0, merged - (delivered == null ? 0 : 1) - (removedFirst == null ? 0 : 1)
      - (removedWaits ? 1 : 0) - (readyWaits ? 1 : 0) - (removedRetries ? 1 : 0)));
    merged = 0;
    listed = false;
    offered.clear();
    lowest.clear();
    if (removedWaits) {
      offered.put(DeviceEvent.Type.REMOVED, removedOffer);
      lowest.put(DeviceEvent.Type.REMOVED, removedLowest);
    }
    retriedRemoved = removedRetries ? removedRetry : null;
    if (removedRetries) {
      offered.put(DeviceEvent.Type.REMOVED, removedRetry);
      lowest.put(DeviceEvent.Type.REMOVED, removedRetryLowest);
      merged = 1;
    }
    retriedReady = readyWaits ? readyOffer : null;
    if (readyWaits) {
      offered.put(DeviceEvent.Type.READY, readyOffer);
      lowest.put(DeviceEvent.Type.READY, readyLowest);
      merged = 1;
    }
    if (removedFirst != null) {
      handler.handle(removedFirst);
    }
    if (delivered != null) {
      handler.handle(delivered);
      if (delivered.getType() == DeviceEvent.Type.REMOVED) {
        gone.run();
      }
    }
  }

  /**
   * The REMOVED of the incarnation this subscriber knows, where the answer shows a new one starting
   * (the REMOVED offered), or serving (an undeployment and a redeployment that came between two
   * answers: both were offered, and no generation change was; a rebuild of the known incarnation
   * announces that instead). Null otherwise. Called before {@link #transition}, which then delivers
   * the new incarnation's READY.
   */
  private DeviceEvent redeployed(DeviceState s, long m) {
    boolean alive = phase == Phase.SERVING || phase == Phase.STARTING || phase == Phase.LOST;
    if (m <= known || !alive || !offered(DeviceEvent.Type.REMOVED, Long.MAX_VALUE)) {
      return null;
    }
    // Only a new deployment starts (a rebuild is REBUILDING): one starting at a newer generation
    // confirms the known incarnation's REMOVED before its own READY is published.
    if (s != DeviceState.STARTING && (s != DeviceState.READY || !offered(DeviceEvent.Type.READY, m)
      || phase == Phase.SERVING && offered(DeviceEvent.Type.GENERATION_CHANGED, m))) {
      return null;
    }
    DeviceEvent removed = event(DeviceEvent.Type.REMOVED, known, known, null);
    phase = Phase.GONE;
    return removed;
  }

  /** The transition from what is known to state {@code s} at generation {@code m}, or null. */
  private DeviceEvent transition(DeviceState s, long m) {
    if (m < known) {
      return null;
    }
    switch (s) {
      case READY:
        if (m == known) {
          if (phase == Phase.STARTING && offered(DeviceEvent.Type.READY, m)) {
            at(m, Phase.SERVING);
            return event(DeviceEvent.Type.READY, m, m, null);
          }
          return null;
        }
        // A newer generation of the incarnation being served was rebuilt; a new incarnation (after a
        // LOST, an undeployment, or none seen) was deployed.
        long from = known;
        if (phase == Phase.SERVING && offered(DeviceEvent.Type.GENERATION_CHANGED, m)) {
          at(m, Phase.SERVING);
          return event(DeviceEvent.Type.GENERATION_CHANGED, from, m, null);
        }
        if (offered(DeviceEvent.Type.READY, m)) {
          at(m, Phase.SERVING);
          return event(DeviceEvent.Type.READY, m, m, null);
        }
        if (phase == Phase.UNSEEN) {
          // Serving since before this subscriber could tell (its first describe went unanswered): the
          // starting point it lacked, nothing to deliver.
          at(m, Phase.SERVING);
        }
        return null;
      case LOST:
        if ((m > known || phase != Phase.LOST && phase != Phase.GONE) && offered(DeviceEvent.Type.LOST, m)) {
          at(m, Phase.LOST);
          return event(DeviceEvent.Type.LOST, m, m, null);
        }
        return null;
      case STOPPED:
        // Undeploying: its REMOVED is published as it stops.
        return phase != Phase.UNSEEN && phase != Phase.GONE && offered(DeviceEvent.Type.REMOVED, Long.MAX_VALUE)
          ? removed(m) : null;
      default:
        // Starting or rebuilding: the event that announces it comes once it serves.
        return null;
    }
  }

  private DeviceEvent removed(long generation) {
    at(generation, Phase.GONE);
    return event(DeviceEvent.Type.REMOVED, generation, generation, null);
  }

  /** Whether an event of {@code type} was offered whose generation the device has reached ({@code <= m}). */
  private boolean offered(DeviceEvent.Type type, long m) {
    Long n = lowest.get(type);
    return n != null && n <= m;
  }

  private void at(long generation, Phase p) {
    known = generation;
    phase = p;
  }

  private DeviceEvent event(DeviceEvent.Type type, long oldGeneration, long newGeneration, String reason) {
    DeviceEvent first = offered.get(type);
    return new DeviceEvent(type, node, device, oldGeneration, newGeneration,
      reason != null ? reason : first != null ? first.getReason() : "confirmed by the device");
  }
}
