package com.vertxcuda.internal;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxBootstrap;
import io.vertx.core.spi.VertxServiceProvider;
import io.vertx.core.spi.context.storage.ContextLocal;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The order of the requests made on one caller — a Vert.x context or, off any context, one thread —
 * and the one place that keeps each request's place in it, from the client to the device's
 * admission. Every typed client sends through here ({@link RequestSender#request}): a request goes
 * out at once when nothing made earlier on its caller is still waiting, and otherwise waits its
 * turn in a queue that only ever moves forward.
 *
 * <p>What sends more than one message for one call — a transfer in chunks, a copy between devices,
 * a coalescing client's group — takes a place with a {@link Hold}: when its turn comes it sends,
 * from any thread, at its own pace, and {@linkplain #release releases} its place once it has sent
 * everything; requests made after it wait in the queue meanwhile, and nobody copies, blocks or
 * waits on the caller's thread for it. A hold that can send all it holds at once and cheaply (a
 * coalescing group) is asked to ({@link Hold#hurry}) when a later request is waiting.
 *
 * <p>An item that must run on its caller's context (anything sent over the event bus, whose order
 * Vert.x keeps per sending context) is run there when its turn comes on another thread; one that may
 * run anywhere (the local route's admission takes requests from any thread) runs on the thread
 * whose release gave it its turn. Only one thread moves the queue at a time.
 *
 * <p>It also counts what the caller has sent each other node over the event bus and not heard
 * back from ({@link #sentOverBus}): a stream to that node's bulk side channel, which bypasses the
 * bus, is put behind those requests by a barrier on the bus only while any of them is unanswered
 * ({@link BulkTransfer}).
 *
 * <p>And it keeps the caller's order across a remote device's addresses where Vert.x does not
 * ({@link #behindFirstUse}): Vert.x keeps a sender's messages in order per address only, and a
 * first message to an address waits for the cluster manager's lookup of who serves it, so one sent
 * after it to an address already looked up could overtake it (a fill overtaking the GEMM before it).
 * While a request the caller sent to an address not yet looked up is on its way, what the caller
 * sends the same node at any other address waits here, in order, until that request completes.
 */
public final class CallerOrder {

  /** A place in the order that is kept until its holder has sent everything it sends there. */
  public interface Hold {
    /**
     * Everything made before it on its caller has been sent: it may send now. It calls
     * {@link CallerOrder#release} once its last message has gone (from any thread, possibly from
     * within this call). Runs on the hold's context unless it may run anywhere.
     */
    void turn();

    /**
     * A later request waits behind this hold, whose turn has come: a holder that can send all it
     * holds at once without copying bulk data or waiting sends it and releases now; the default
     * keeps its place until it releases on its own. Any thread.
     */
    default void hurry() {
    }
  }

  private static final System.Logger LOG = System.getLogger(CallerOrder.class.getName());
  private static final ThreadLocal<CallerOrder> THREAD = ThreadLocal.withInitial(CallerOrder::new);

  /**
   * Where a context keeps its caller's order: a context local (an array slot), registered as Vert.x
   * asks, by a service provider that Vert.x loads before it sizes its contexts' storage; every
   * request looks it up, and an array slot is cheaper to reach than an entry in the context's data
   * map. Public for {@link java.util.ServiceLoader} only.
   */
  public static final class Storage implements VertxServiceProvider {
    static final ContextLocal<CallerOrder> LOCAL = ContextLocal.registerLocal(CallerOrder.class);
    /** For a Vert.x whose contexts were sized before this class loaded (its service file not seen). */
    private static final Object KEY = new Object();

    @Override
    public void init(VertxBootstrap builder) {
    }
  }

  private static final class Item {
    final Hold hold;
    final Runnable send;
    final Context context;
    final boolean anyThread;

    Item(Hold hold, Runnable send, Context context, boolean anyThread) {
      this.hold = hold;
      this.send = send;
      this.context = context;
      this.anyThread = anyThread;
    }
  }

  private final ArrayDeque<Item> queue = new ArrayDeque<>();
  /** The hold whose turn has come and which has not released yet. */
  private Hold holding;
  /** Whether a thread is moving the queue (or sending straight out) now: nothing may overtake it. */
  private boolean draining;
  /** Per node: how many requests this caller sent each of its addresses over the bus and has not heard back from. */
  private final Map<String, Map<String, Integer>> unanswered = new HashMap<>();
  /** Per node: requests sent to an address not looked up yet and not completed, by address. */
  private final Map<String, Map<String, Integer>> firstUses = new HashMap<>();
  /** Per node: sends that wait behind those, in the order they were made. */
  private final Map<String, ArrayDeque<Deferred>> behindFirstUses = new HashMap<>();

  /** A send held back behind a first use: its address, and where it must run. */
  private record Deferred(String address, Context context, Runnable send) {
  }

  private CallerOrder() {
  }

  /**
   * An order of its own, for a caller that is neither a context nor a thread: one connection of a
   * node's bulk side channel ({@link BulkServer}), whose transfers wait behind nobody else's.
   */
  public static CallerOrder separate() {
    return new CallerOrder();
  }

  /** The current caller's order: the current Vert.x context's or, off any context, this thread's. */
  public static CallerOrder current() {
    Context context = Vertx.currentContext();
    if (context == null) {
      return THREAD.get();
    }
    // The root's: every duplicate of a context (a request's, say) is the same caller.
    return VertxInternals.rootLocal(context, Storage.LOCAL, Storage.KEY, CallerOrder::new);
  }

  /**
   * Sends a request in its place: {@code send} runs now, on this thread, when nothing made earlier on
   * this caller waits; otherwise when its turn comes (on {@code context} unless {@code anyThread}).
   * {@code send} must not complete its future on the calling stack.
   */
  public <T> Future<T> send(Context context, boolean anyThread, Supplier<Future<T>> send) {
    Hold ahead;
    Promise<T> later;
    synchronized (this) {
      if (!draining && holding == null && queue.isEmpty()) {
        draining = true;
        later = null;
        ahead = null;
      } else {
        later = Promise.promise();
        queue.add(new Item(null, () -> sent(context, send).onComplete(later), context, anyThread));
        ahead = holding;
      }
    }
    if (later == null) {
      try {
        return sent(context, send);
      } finally {
        drain();
      }
    }
    if (ahead != null) {
      ahead.hurry();
    }
    return later.future();
  }

  /**
   * Takes a place for {@code hold}: its {@link Hold#turn} runs now, on this thread, when nothing made
   * earlier waits; otherwise when its turn comes (on {@code context} unless {@code anyThread}).
   */
  public void hold(Context context, boolean anyThread, Hold hold) {
    Hold ahead = null;
    boolean now;
    synchronized (this) {
      now = !draining && holding == null && queue.isEmpty();
      if (now) {
        draining = true;
        holding = hold;
      } else {
        queue.add(new Item(hold, null, context, anyThread));
        ahead = holding;
      }
    }
    if (now) {
      try {
        turn(hold);
      } finally {
        drain();
      }
    } else if (ahead != null) {
      ahead.hurry();
    }
  }

  /**
   * A request of this caller went to {@code address} of {@code node} over the event bus: it counts
   * until the returned action runs, once, when the node has answered it (a reply, or a failure the
   * node sent). One never answered (its timeout passed first, the node left) stays counted: it may
   * still reach the node's admission. Any thread.
   */
  Runnable sentOverBus(String node, String address) {
    synchronized (this) {
      unanswered.computeIfAbsent(node, n -> new HashMap<>()).merge(address, 1, Integer::sum);
    }
    return () -> {
      synchronized (this) {
        Map<String, Integer> at = unanswered.get(node);
        if (at != null) {
          at.computeIfPresent(address, (a, count) -> count == 1 ? null : count - 1);
          if (at.isEmpty()) {
            unanswered.remove(node);
          }
        }
      }
    };
  }

  /**
   * The addresses of {@code node} this caller sent requests to over the event bus that the node has
   * not answered (a timed-out one included: it may still reach the node's admission), or holds sends
   * for behind a first use: empty when each has passed the node's admission, so that what the caller
   * sends the node now by another way comes after them there. Otherwise a request to each of these
   * addresses, sent now, reaches the node after them (Vert.x keeps a sender's order per address, and
   * only per address: a first message to an address waits for the cluster's lookup of who serves it,
   * and one sent later to an address already looked up can overtake it). Any thread.
   */
  synchronized Set<String> unsettledAt(String node) {
    Set<String> at = new LinkedHashSet<>();
    Map<String, Integer> sent = unanswered.get(node);
    if (sent != null) {
      at.addAll(sent.keySet());
    }
    ArrayDeque<Deferred> held = behindFirstUses.get(node);
    if (held != null) {
      held.forEach(d -> at.add(d.address()));
    }
    return at;
  }

  /**
   * Holds {@code send} back when this caller has a request on its way to {@code node} at another
   * address that was not looked up when it left ({@link ClusterWatch#lookedUp}), or when sends of
   * this caller to the node already wait: then it runs on {@code context}, in the order held, once
   * those requests have completed (answered, failed, timed out or cut by the node's leave), and this
   * returns true. Returns false when it may go now, on this thread. Called from the send path
   * ({@link RequestSender#dispatch}), so every message a caller sends over the bus — a request in its
   * turn, a held transfer's chunks, a coalescing group — passes here.
   */
  boolean behindFirstUse(String node, String address, Context context, Runnable send) {
    synchronized (this) {
      ArrayDeque<Deferred> waiting = behindFirstUses.get(node);
      if (waiting == null && !firstUseElsewhere(node, address)) {
        return false;
      }
      behindFirstUses.computeIfAbsent(node, n -> new ArrayDeque<>()).add(new Deferred(address, context, send));
      return true;
    }
  }

  /**
   * A request of this caller left for {@code address} of {@code node} before that address was
   * looked up: sends to the node's other addresses wait until the returned action runs (once, when
   * it completes in any way).
   */
  Runnable firstUse(String node, String address) {
    synchronized (this) {
      firstUses.computeIfAbsent(node, n -> new HashMap<>()).merge(address, 1, Integer::sum);
    }
    return () -> {
      synchronized (this) {
        Map<String, Integer> at = firstUses.get(node);
        if (at != null) {
          at.computeIfPresent(address, (a, count) -> count == 1 ? null : count - 1);
          if (at.isEmpty()) {
            firstUses.remove(node);
          }
        }
      }
      sendHeldBehindFirstUses(node);
    };
  }

  // Whether a first use of another address of the node is on its way.
  private boolean firstUseElsewhere(String node, String address) {
    Map<String, Integer> at = firstUses.get(node);
    return at != null && (at.size() > 1 || !at.containsKey(address));
  }

  // Sends what waits behind first uses, in order, each on its context, while nothing holds it back
  // (a send may itself be a first use, which holds back those after it).
  private void sendHeldBehindFirstUses(String node) {
    while (true) {
      Deferred next;
      synchronized (this) {
        ArrayDeque<Deferred> waiting = behindFirstUses.get(node);
        if (waiting == null) {
          return;
        }
        next = waiting.peek();
        if (firstUseElsewhere(node, next.address)) {
          return;
        }
        if (Vertx.currentContext() != next.context) {
          // Its own context goes on from here; until then the queue stays, so nothing overtakes it.
          next.context.runOnContext(v -> sendHeldBehindFirstUses(node));
          return;
        }
        waiting.poll();
        if (waiting.isEmpty()) {
          behindFirstUses.remove(node);
        }
      }
      try {
        next.send.run();
      } catch (RuntimeException | Error e) {
        LOG.log(System.Logger.Level.WARNING, "a send held behind a first use failed to start", e);
      }
    }
  }

  /**
   * The hold that is the last thing in this order (nothing was made after it yet), whether its turn
   * has come or it waits; null when the last thing is a request or the order is empty.
   */
  public synchronized Hold last() {
    return queue.isEmpty() ? holding : queue.peekLast().hold;
  }

  /** {@code hold} has sent everything it holds: what waits behind it goes now. Any thread; once. */
  public void release(Hold hold) {
    synchronized (this) {
      if (holding != hold) {
        return;
      }
      holding = null;
      if (draining) {
        return; // the thread moving the queue goes on
      }
      draining = true;
    }
    drain();
  }

  // Moves the queue while nothing holds it; this thread set {@code draining}.
  private void drain() {
    while (true) {
      Item next;
      synchronized (this) {
        if (holding != null || queue.isEmpty()) {
          draining = false;
          return;
        }
        next = queue.peek();
        if (!next.anyThread && Vertx.currentContext() != next.context) {
          // Its own context goes on from here; draining stays set until then.
          next.context.runOnContext(v -> drain());
          return;
        }
        queue.poll();
        if (next.hold != null) {
          holding = next.hold;
        }
      }
      if (next.hold != null) {
        turn(next.hold);
      } else {
        next.send.run();
      }
    }
  }

  // A holder that fails to start cannot keep the order waiting: its place is released, and what
  // waits behind it goes on.
  private void turn(Hold hold) {
    try {
      hold.turn();
    } catch (RuntimeException | Error e) {
      release(hold);
      LOG.log(System.Logger.Level.WARNING, "a holder failed when its turn came; its place is released", e);
    }
  }

  // A request that cannot be sent (an exception, the heap exhausted) is answered, never lost, and
  // never stops the queue.
  private static <T> Future<T> sent(Context context, Supplier<Future<T>> send) {
    try {
      return send.get();
    } catch (RuntimeException | Error e) {
      return RequestSender.failLater(context, e);
    }
  }
}
