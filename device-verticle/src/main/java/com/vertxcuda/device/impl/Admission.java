package com.vertxcuda.device.impl;

import com.vertxcuda.device.context.ContextTier;
import com.vertxcuda.device.context.InFlight;
import com.vertxcuda.device.memory.LentBuffers;
import com.vertxcuda.Addresses;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.Failures;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.spi.IdleWait;
import com.vertxcuda.device.context.Transfers;
import com.vertxcuda.device.spi.RequestType;
import com.vertxcuda.internal.RequestTrace;
import com.vertxcuda.internal.CallerOrder;
import com.vertxcuda.internal.ChunkedTransfer;
import com.vertxcuda.internal.TransferRoute;
import com.vertxcuda.internal.LocalRoutes;
import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.internal.TransferMemory;
import com.vertxcuda.internal.VertxInternals;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.DeviceState;
import com.vertxcuda.DeviceStats;
import com.vertxcuda.message.DownloadReply;
import com.vertxcuda.message.DownloadRequest;
import com.vertxcuda.message.UploadRequest;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Admission for one device: where every request enters, from the event bus (on the device's event
 * loop) or from a typed client in this JVM (on the caller's own thread, {@link #route}). It refuses
 * what clients may not send, turns requests away past {@code maxInFlight} and downloads past the
 * transfer budget ({@link TransferBudget}), queues them (bounded) while there is no ready context,
 * and hands the rest straight to the current context tier. Every request it accepts is an entry of
 * the device's one in-flight table ({@link InFlight}) until its one answer; those from the event bus
 * that wait behind a large transfer's pump are counted with them and expire at their deadline too.
 * The device verticle supervises (the state, the context tier, its replacement); this class only
 * reads them.
 */
public final class Admission {

  /** What admission reads of the device that supervises it. */
  public interface Device {
    /** The device's state; changed on its event loop only. */
    DeviceState state();

    /** The ready context tier, or null. */
    ContextTier tier();

    /** Why the device is LOST. */
    String lostReason();

    /** The device's description (answered at admission). */
    DeviceInfo info();

    /** A context's stats with what the supervisor knows (generation, state, spare). */
    DeviceStats supervised(DeviceStats fromContext);

    /** Whether a copy to the device at {@code target} may go straight between contexts. */
    boolean copiesDirectlyTo(String target);

    /**
     * The host memory the device lends now, uncharged: the ready tier's, else memory that lends no
     * transfer buffer, lands in the host buffer pool and has the limit a tier of this device's
     * isolation will have.
     */
    TransferMemory transferMemory();
  }

  private final DeviceOptions options;
  /** How often a local caller's event loop wakes itself while its request is unanswered (ns; 0: not). */
  private final long callerWake;
  /** How long a local caller's event loop polls for its answer (its Vert.x runs a PollingTransport), ns; 0: not. */
  private final long callerPoll;
  private final String address;
  private static final Library[] LIBRARIES = Library.values();
  /** Each library's address on this device, by the index of {@link #LIBRARIES}. */
  private final String[] libraryAddresses;
  private final String self;
  private final Context eventLoop;
  private final Device device;
  private final InFlight inFlight = new InFlight();
  /** Admitted requests waiting for a context (starting or rebuilt); on the event loop only. */
  private final ArrayDeque<InFlight.Entry> pending = new ArrayDeque<>();
  /** Requests from the event bus waiting for their turn in this loop's order ({@link CallerOrder}), behind a pump. */
  private final AtomicInteger queued = new AtomicInteger();
  /** What the device lends of host memory, and to whom. */
  private final TransferBudget budget;
  /** Local requests on their way to the event loop: while any is, later ones follow it there. */
  private final AtomicInteger hops = new AtomicInteger();
  private final Vertx vertx;
  /** The spans of traced requests; null where this Vert.x has no tracer (then nothing is traced). */
  private final DeviceSpans spans;
  /**
   * The device's own pump for large transfers from the event bus ({@link ChunkedTransfer} over
   * {@link #route}): its pieces are admitted as this node's, in this loop's order.
   */
  private final TransferRoute pump = new TransferRoute() {
    @Override
    public <R> Future<R> dispatch(Object body, Context caller, CallerOrder order) {
      return route.request(address, body, options.getRequestTimeout(), caller);
    }

    @Override
    public void hold(CallerOrder order, Context caller, boolean anyThread, CallerOrder.Hold hold) {
      order.hold(caller, anyThread, hold);
    }

    @Override
    public Context callerContext() {
      return eventLoop;
    }

    @Override
    public CallerOrder order() {
      return CallerOrder.current();
    }

    @Override
    public boolean remote() {
      return false;
    }

    @Override
    public TransferMemory lent() {
      return lent;
    }
  };

  /**
   * Admission for the device at {@code address}, whose state lives on {@code eventLoop}; {@code self}
   * is this node (the owner of what local callers allocate).
   */
  public Admission(Vertx vertx, DeviceOptions options, String address, String self, Context eventLoop, Device device) {
    this.vertx = vertx;
    this.options = options;
    this.callerWake = IdleWait.callerWakeNanos(options, vertx.isNativeTransportEnabled());
    this.callerPoll = PollingTransportImpl.pollNanos(vertx);
    if (options.getCallerWake() > 0 && callerWake == 0) {
      System.getLogger(Admission.class.getName()).log(System.Logger.Level.WARNING, "callerWake is set but this Vert.x "
        + "runs the NIO transport, whose loops cannot wake every " + options.getCallerWake() + " µs without spinning: "
        + "callerWake is off (prefer the native transport: VertxOptions.setPreferNativeTransport(true) with "
        + "netty-transport-native-epoll)");
    }
    this.address = address;
    this.libraryAddresses = new String[LIBRARIES.length];
    for (int i = 0; i < LIBRARIES.length; i++) {
      libraryAddresses[i] = Addresses.library(address, LIBRARIES[i]);
    }
    this.self = self;
    this.eventLoop = eventLoop;
    this.device = device;
    this.budget = new TransferBudget(options.getTransferBudget(), options.getOwnerTransferQuota());
    this.spans = DeviceSpans.of(eventLoop, address);
    inFlight.measure(options.isMeasurePhases());
  }

  /** The device's one in-flight table. */
  public InFlight inFlight() {
    return inFlight;
  }

  /** Requests waiting for a context now. */
  public int pending() {
    return pending.size();
  }

  /** Requests admitted and not yet answered, wherever they wait. */
  public int load() {
    return inFlight.size();
  }

  /** Bytes of the transfer budget in use: host memory lent to users now, or charged to downloads on their way. */
  public long chargedBytes() {
    return budget.held();
  }

  /** A request from the event bus, to the device ({@code library} null) or one of its libraries; on the event loop. */
  public void accept(Message<Object> message, Library library) {
    // The owner of what the request allocates is the node the event bus says sent it. Fails closed:
    // a request whose sender cannot be identified is refused, never served with no owner.
    String sender = VertxInternals.sender(vertx, message);
    if (sender == null) {
      InFlight.Answer.of(message).fail(new CudaException(FailureCode.FORBIDDEN, "the sender of this request "
        + "could not be identified (the event bus did not name the node that sent it), so what it would "
        + "allocate would have no owner; refused"));
      return;
    }
    // A clustered message's body is decoded here, on first reading: one the wire cannot read is
    // answered BAD_REQUEST (its sender counts it answered, and its later requests go on).
    Object body;
    try {
      body = message.body();
    } catch (RuntimeException e) {
      InFlight.Answer.of(message).fail(new CudaException(FailureCode.BAD_REQUEST, "the request cannot be read: "
        + e.getMessage()));
      return;
    }
    // A sender timing its work asks for the request's phases, sent back with the answer.
    boolean timed = message.headers().contains(RequestTrace.PHASES_HEADER);
    InFlight.Entry r = inFlight.entry(body, InFlight.Answer.of(message, timed), library, deadline(message), sender);
    if (timed) {
      r.measure();
    }
    if (spans != null) {
      spans.bus(r, library, message);
    }
    Admitted admitted = admit(r);
    if (admitted == null) {
      return;
    }
    RequestType<?, ?> type = r.type();
    if (type.admission() == RequestType.Admission.STATS) {
      // Stats: handed on at once, never behind a transfer (an operator sees an overloaded device).
      dispatch(r);
      return;
    }
    if (pumped(r, type, admitted.charge())) {
      return;
    }
    keepUntilAnswered(r, admitted.charge());
    // Requests from the event bus keep their place in the order they arrived in on this loop, as a
    // caller's requests do in its own (CallerOrder): behind a large transfer that arrived before them.
    // A describe too: a remote client's describe is the barrier its bulk stream waits behind. While
    // one waits it is in the in-flight table, so it counts toward maxInFlight, and its deadline, a
    // loss or an undeploy answers it there.
    queued.incrementAndGet();
    CallerOrder.current().send(eventLoop, false, () -> {
      queued.decrementAndGet();
      if (hops.get() > 0) {
        // A pump's last views may still be on their way here (the local route hops through this
        // loop while one is): this request follows them.
        hop(r);
      } else {
        dispatch(r);
      }
      return Future.succeededFuture();
    });
  }

  /** An admitted request, with what it costs of the transfer budget (null: nothing). */
  private record Admitted(TransferBudget.Charge charge) {
  }

  /**
   * The one admission of a client's request, from the event bus or the local route alike, on the
   * thread it arrived on: refused when only the device sends its kind, turned away past
   * maxInFlight on a READY device, charged to the transfer budget ({@link #charge}). Admitted, it is
   * in the in-flight table from here to its answer: counted toward maxInFlight wherever it waits (in
   * this loop's order, on its way to the loop, for a context), and answered there by its deadline, a
   * loss or an undeploy. Null once it is answered.
   */
  private Admitted admit(InFlight.Entry r) {
    RequestType<?, ?> type = r.type();
    if (refusedFromClients(r)) {
      return null;
    }
    if (full(type)) {
      rejectFull(r);
      return null;
    }
    TransferBudget.Charge charge;
    try {
      charge = charge(r, type);
    } catch (CudaException refused) {
      r.fail(refused);
      return null;
    }
    r.track();
    return new Admitted(charge);
  }

  // Past maxInFlight for a request of {@code type}, counting every admitted one not yet answered; on a READY device only.
  private boolean full(RequestType<?, ?> type) {
    return device.state() == DeviceState.READY && !type.exemptFromLoad() && inFlight.size() >= options.getMaxInFlight();
  }

  /**
   * The one rule for what a request costs of the transfer budget, for requests from the event bus
   * and the local route alike: a download of the device (not a library's) lends host memory of its
   * length, or lands in memory of that length when the pump brings it in. Null: nothing to charge
   * (a handle the device refuses anyway charges nothing). Throws QUEUE_FULL where the budget or the
   * owner's quota has no room now. Any thread.
   */
  private TransferBudget.Charge charge(InFlight.Entry r, RequestType<?, ?> type) {
    if (type.crossing() != RequestType.Crossing.REGION_TO_HOST || r.library() != null
      || !(r.body() instanceof DownloadRequest)) {
      return null;
    }
    BufferHandle h = ((DownloadRequest) r.body()).getHandle();
    long bytes;
    try {
      bytes = h == null ? 0 : h.byteLength();
    } catch (ArithmeticException oversized) {
      return null;
    }
    if (bytes <= 0 || bytes > Transfers.MAX_DOWNLOAD) {
      return null;
    }
    return budget.take(r.owner(), bytes);
  }

  // The charge stays with the download's memory once the answer hands it over, and goes back with a failure.
  private static void keepUntilAnswered(InFlight.Entry r, TransferBudget.Charge charge) {
    if (charge != null) {
      r.holding(reply -> charge.until(reply instanceof DownloadReply ? ((DownloadReply) reply).getData() : null));
    }
  }

  /**
   * A large upload or download from the event bus goes through the device's own pump ({@link #pump}),
   * as a local client's does ({@link ChunkedTransfer#pumpedLocally}): in views, with a place in this loop's order that
   * the requests that arrived after it wait behind until its last view has left. The request stays
   * in the in-flight table until the pump answers it (or a loss or its deadline does first). A
   * download lands in memory its {@code charge} paid for at admission, which stays charged until
   * the pump is done with it and, once handed over, until it returns.
   */
  private boolean pumped(InFlight.Entry r, RequestType<?, ?> type, TransferBudget.Charge charge) {
    if (r.library() != null) {
      return false;
    }
    Buffer[] landed = new Buffer[1];
    Future<Object> done;
    switch (type.crossing()) {
      case REGION_TO_DEVICE: {
        UploadRequest u = (UploadRequest) r.body();
        if (u.getHandle() == null || u.getData() == null || !ChunkedTransfer.pumpedLocally(lent, u.getHandle(), u.getData())) {
          return false;
        }
        r.submitted();
        done = ChunkedTransfer.uploadLocal(pump, u.getHandle(), u.getData()).map(u.getHandle());
        break;
      }
      case REGION_TO_HOST: {
        DownloadRequest d = (DownloadRequest) r.body();
        if (d.getHandle() == null || !ChunkedTransfer.pumpedLocally(lent, d.getHandle())) {
          return false;
        }
        r.submitted();
        // Its landing, paid for at its admission: from the memory of the device as it is when the
        // first chunk lands, uncharged.
        done = ChunkedTransfer.downloadLanded(pump, d.getHandle(), bytes -> device.transferMemory().landing(bytes)).map(data -> {
          landed[0] = data;
          return new DownloadReply(d.getHandle(), data);
        });
        break;
      }
      default:
        return false;
    }
    done.onComplete(ar -> {
      if (ar.succeeded()) {
        if (r.tryReply(ar.result())) {
          if (charge != null) {
            charge.until(landed[0]);
          }
          return;
        }
        if (landed[0] != null) {
          // Answered already (its deadline, a loss): nobody takes the landing memory, so it goes back now.
          lent.release(landed[0]);
        }
      } else {
        r.fail(Failures.toCudaException(ar.cause()));
      }
      if (charge != null) {
        charge.give();
      }
    });
    return true;
  }

  // Admits {@code r} on the event loop, after what is already on its way there; while any request
  // is, later local requests follow it there too (only once it is admitted may one skip the loop).
  private void hop(InFlight.Entry r) {
    hops.incrementAndGet();
    eventLoop.runOnContext(v -> {
      try {
        dispatch(r);
      } finally {
        hops.decrementAndGet();
      }
    });
  }


  /** A context is ready: what waited goes to it first, in order; on the event loop, before the state becomes READY. */
  public void drain(ContextTier tier) {
    while (!pending.isEmpty()) {
      InFlight.Entry r = pending.poll();
      if (!r.answered()) {
        submit(r, tier);
      }
    }
  }

  /**
   * Answers TIMEOUT to every admitted request past its deadline, wherever it waits (a caller's
   * timeout holds while the context starts or is rebuilt); on the event loop.
   */
  public void expire(long now) {
    inFlight.expire(now);
    if (!pending.isEmpty()) {
      pending.removeIf(InFlight.Entry::answered);
    }
  }

  /** Answers every admitted request not yet answered CONTEXT_LOST, wherever it waits: the device is gone. */
  public void failAll(String reason) {
    inFlight.failAll(FailureCode.CONTEXT_LOST, reason);
    pending.clear();
  }

  /**
   * A context was lost: what was handed to it (or to a pump) is answered CONTEXT_LOST; what waits
   * for a context, or for its turn on this loop, goes to the next one.
   */
  public void contextLost(String reason) {
    inFlight.failSubmitted(FailureCode.CONTEXT_LOST, reason);
  }

  /** The device's own stats, with what admission counts: waiting requests as the queue, the rest in flight. */
  public DeviceStats counted(DeviceStats s) {
    int queue = pending.size() + queued.get();
    return s.setInFlight(Math.max(0, inFlight.size() - queue)).setQueueDepth(queue).setOperationsServed(inFlight.served())
      .setFailuresByCode(inFlight.failuresByCode());
  }

  /**
   * The local route ({@link LocalRoutes}): a typed client in this JVM on this Vert.x admits its
   * request from its own thread, straight into the context's queue, when the device is ready and no
   * earlier request of the route is still on its way through the event loop; otherwise the request
   * takes its turn on the event loop. The answer completes on the caller's context.
   */
  public LocalRoutes.Route route() {
    return route;
  }

  private final LocalRoutes.Route route = new LocalRoutes.Route() {
    @Override
    public boolean copiesDirectlyTo(String target) {
      return device.copiesDirectlyTo(target);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> Future<T> request(String target, Object body, long timeoutMillis, Context caller) {
      return request(target, body, timeoutMillis, caller, null);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> Future<T> request(String target, Object body, long timeoutMillis, Context caller, RequestTrace trace) {
      Library library = libraryOf(target);
      Promise<Object> promise = Promise.promise();
      long deadline = System.nanoTime() + Math.min(timeoutMillis, options.getRequestTimeout()) * 1_000_000;
      InFlight.Entry r = inFlight.entry(body, CallerWake.answer(promise, caller, callerWake, callerPoll), library, deadline, self);
      if (trace != null) {
        if (trace.timed()) {
          r.measure();
        }
        if (spans != null && trace.traced()) {
          spans.local(r, library, trace); // its span hands the phases to the trace
        } else if (trace.timed()) {
          r.observe((code, phases) -> trace.phases(phases));
        }
      }
      ContextTier tier = device.tier();
      DeviceState state = device.state();
      // Admitted or turned away on the caller's thread: a refusal runs nothing, so no order is at
      // stake, and the caller hears it (in a task of its own) instead of behind the burst that filled the device.
      Admitted admitted = admit(r);
      if (admitted != null) {
        keepUntilAnswered(r, admitted.charge());
        // A tier that has ended (stopped by the device, or gone on its own) was read just before the
        // device took its end in: the request goes to the loop, behind that news, and waits there for
        // the next context instead of being answered CONTEXT_LOST by a tier it never reached.
        if (state == DeviceState.READY && tier != null && hops.get() == 0
          && r.type().admission() != RequestType.Admission.DESCRIBED && !tier.ended()) {
          submit(r, tier);
        } else {
          hop(r);
        }
      }
      return (Future<T>) promise.future();
    }

    @Override
    public TransferMemory transferMemory() {
      return lent;
    }
  };

  /**
   * What the device lends its users (through the local route and the device verticle): the memory of
   * whichever tier is ready at each call, each transfer buffer and landing charged to this node's
   * transfer budget until it returns.
   */
  private final TransferMemory lent = new TransferMemory() {
    @Override
    public Buffer allocate(int bytes) {
      TransferMemory memory = device.transferMemory();
      return budget.take(self, bytes).lend(() -> memory.allocate(bytes));
    }

    /** None (null) past the budget. */
    @Override
    public Buffer landing(int bytes) {
      TransferMemory memory = device.transferMemory();
      TransferBudget.Charge charge;
      try {
        charge = budget.take(self, bytes);
      } catch (CudaException noRoom) {
        return null;
      }
      return charge.lend(() -> memory.landing(bytes));
    }

    @Override
    public boolean release(Buffer buffer) {
      // Back to whichever pool or region of this JVM lent it, whether or not a context is ready now:
      // the give-backs of a transfer that failed come mostly while the device rebuilds or is lost.
      return LentBuffers.release(buffer);
    }

    @Override
    public boolean lends(Buffer buffer) {
      return device.transferMemory().lends(buffer);
    }

    /** What the tier lends at once, and never more than one charge of the transfer budget may be. */
    @Override
    public long limit() {
      return Math.min(device.transferMemory().limit(), budget.largest());
    }

    @Override
    public long held() {
      return device.transferMemory().held();
    }
  };

  // The route's targets are this device's addresses (LocalRoutes looked them up): compared, not parsed.
  private Library libraryOf(String target) {
    if (target.equals(address)) {
      return null;
    }
    for (int i = 0; i < libraryAddresses.length; i++) {
      if (libraryAddresses[i].equals(target)) {
        return LIBRARIES[i];
      }
    }
    throw new IllegalArgumentException("not an address of " + address + ": " + target);
  }

  // Requests only the device makes for itself are refused from clients (bus or local route).
  private static boolean refusedFromClients(InFlight.Entry r) {
    RequestType<?, ?> type = r.type();
    if (!type.fromClients()) {
      r.fail(FailureCode.BAD_REQUEST, "the device does not serve " + type.body().getSimpleName()
        + ": only the device sends it");
      return true;
    }
    return false;
  }

  /**
   * Hands an admitted request on, on the event loop: a describe answered here, the rest to the ready
   * context, or kept until one is (starting, rebuilt); refused when the device is lost or gone.
   */
  private void dispatch(InFlight.Entry r) {
    if (r.answered()) {
      return; // its deadline, or the device's loss, answered it while it waited
    }
    if (r.type().admission() == RequestType.Admission.DESCRIBED) {
      r.describe(device.info());
      return;
    }
    DeviceState state = device.state();
    switch (state) {
      case READY: {
        ContextTier tier = device.tier();
        if (tier == null) {
          // Not reached while state and context change together on the event loop; a guard, not a path.
          r.fail(FailureCode.CONTEXT_LOST, "the device has no ready context");
        } else {
          submit(r, tier);
        }
        break;
      }
      case STARTING:
      case REBUILDING:
        if (pending.size() >= options.getPendingQueueCapacity()) {
          r.fail(FailureCode.QUEUE_FULL, "the device's pending queue holds " + pending.size()
            + " requests while the context is " + (state == DeviceState.STARTING ? "starting" : "rebuilt"));
        } else {
          pending.add(r);
        }
        break;
      case LOST:
        r.fail(FailureCode.CONTEXT_LOST, device.lostReason());
        break;
      default:
        r.fail(FailureCode.CONTEXT_LOST, "the device was undeployed");
    }
  }

  private void rejectFull(InFlight.Entry r) {
    r.fail(FailureCode.QUEUE_FULL, "the device has " + inFlight.size() + " requests in flight "
      + "(maxInFlight " + options.getMaxInFlight() + "); try again when some are answered");
  }

  // The sender's timeout travels with the request (a header); the device's own bound caps it.
  private long deadline(Message<Object> message) {
    long timeout = options.getRequestTimeout();
    String sent = message.headers().get(RequestSender.TIMEOUT_HEADER);
    if (sent != null) {
      try {
        timeout = Math.min(timeout, Math.max(0, Long.parseLong(sent)));
      } catch (NumberFormatException ignored) {
        // the device's own bound holds
      }
    }
    return System.nanoTime() + timeout * 1_000_000;
  }

  // Any thread (the local route calls it from the caller's).
  private void submit(InFlight.Entry r, ContextTier tier) {
    if (r.type().admission() == RequestType.Admission.STATS) {
      r.finish(body -> counted(device.supervised((DeviceStats) body)));
    }
    tier.submit(r.submitted());
  }
}
