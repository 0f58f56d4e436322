package com.vertxcuda.device;

import com.vertxcuda.impl.VertxInternals;
import com.vertxcuda.Addresses;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.Library;
import com.vertxcuda.impl.ClusterWatch;
import com.vertxcuda.impl.Nodes;
import com.vertxcuda.impl.ReclaimRequest;
import com.vertxcuda.codec.CudaCodecs;
import com.vertxcuda.device.context.RequestTable;
import com.vertxcuda.device.spi.RequestType;
import com.vertxcuda.device.impl.Backends;
import com.vertxcuda.device.impl.ContextTier;
import com.vertxcuda.device.impl.InFlight;
import com.vertxcuda.device.impl.RegistryPublisher;
import com.vertxcuda.device.impl.SpareTier;
import com.vertxcuda.device.isolation.ProcessContextTier;
import com.vertxcuda.device.impl.InProcessContextTier;
import com.vertxcuda.impl.LocalRoutes;
import com.vertxcuda.impl.RequestSender;
import com.vertxcuda.message.DeviceEvent;
import com.vertxcuda.message.DeviceInfo;
import com.vertxcuda.message.DeviceState;
import com.vertxcuda.message.DeviceStats;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.Context;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The outer tier of one GPU: a stable address that outlives any number of context incarnations and
 * owns the generation. It admits requests (bounded in flight; queued, bounded, while there is no
 * ready context), hands each straight to the current context tier's one submission queue, and
 * supervises: a poisoned, stuck or dead context is replaced, the generation goes up, and
 * subscribers hear of it on the events address. Every request it accepts gets exactly one reply
 * ({@link InFlight}); replies leave from where the work completes, not from here.
 *
 * <p>Its state lives on its event loop; it never blocks.
 */
public class DeviceVerticle extends VerticleBase {

  private static final System.Logger LOG = System.getLogger(DeviceVerticle.class.getName());

  private DeviceOptions options;
  private Isolation isolation;
  private String node;
  private int device;
  private String address;
  private Context eventLoop;

  // Volatile: a stats reply reads them on the thread that completes it.
  private volatile DeviceState state = DeviceState.STARTING;
  private volatile long generation;
  private String lostReason;
  // Volatile: the transfer-buffer methods may be called from any thread.
  private volatile ContextTier context;
  private SpareTier spare;
  private final ArrayDeque<InFlight.Entry> pending = new ArrayDeque<>();
  private final InFlight inFlight = new InFlight();
  private final ArrayDeque<Long> restarts = new ArrayDeque<>();
  private final List<MessageConsumer<?>> consumers = new ArrayList<>();
  private RegistryPublisher registry;
  private long statsTimer = -1;
  private volatile long freeMemory;
  private String self;
  private Runnable stopWatching = () -> { };
  private long heartbeatTimer = -1;
  private long expiryTimer = -1;
  private boolean heartbeatOutstanding;
  private RequestListener requestListener;

  /** A device configured by the deployment's config (DeviceOptions JSON). */
  public DeviceVerticle() {
  }

  public DeviceVerticle(DeviceOptions options) {
    this.options = new DeviceOptions(options);
  }

  /**
   * Reports every client request this device answers to {@code listener} (metrics); set it before
   * deploying. Null: none.
   */
  public DeviceVerticle setRequestListener(RequestListener listener) {
    this.requestListener = listener;
    return this;
  }

  @Override
  public Future<?> start() {
    if (options == null) {
      options = new DeviceOptions(config());
    }
    CudaCodecs.register(vertx.eventBus());
    self = Nodes.self(vertx);
    node = options.getNode() != null ? options.getNode() : self;
    device = options.getDevice();
    address = Addresses.device(node, device);
    inFlight.listen(address, requestListener);
    generation = firstGeneration(address);
    eventLoop = vertx.getOrCreateContext();
    isolation = Backends.isolation(options);
    spare = new SpareTier(this::launch, address);
    registry = new RegistryPublisher(vertx, node, device, options, this::info);
    consumers.add(vertx.eventBus().consumer(address, m -> accept(m, null)));
    LocalRoutes.register(vertx, address, route);
    for (Library library : options.getLibraries()) {
      String a = Addresses.library(node, device, library);
      consumers.add(vertx.eventBus().consumer(a, m -> accept(m, library)));
      LocalRoutes.register(vertx, a, route);
    }
    ClusterWatch watch = ClusterWatch.of(vertx);
    return watch.declarePolicy().compose(v -> watch.checkPolicy()).compose(v -> launch(generation))
      .onSuccess(tier -> {
        ready(tier);
        registry.publish(DeviceEvent.Type.READY, generation, generation, "started");
        // What a node that left the cluster held here goes back.
        stopWatching = watch.onLeft(gone -> eventLoop.runOnContext(x -> reclaim(gone)));
        registry.start();
        statsTimer = vertx.setPeriodic(1_000, id -> refreshFreeMemory());
        heartbeatTimer = vertx.setPeriodic(options.getHeartbeatInterval(), id -> heartbeat());
        // Requests past their deadline are answered TIMEOUT even if their context never answers.
        expiryTimer = vertx.setPeriodic(Math.max(10, Math.min(250, options.getRequestTimeout() / 4)),
          id -> inFlight.expire(System.nanoTime()));
      })
      .recover(t -> {
        consumers.forEach(MessageConsumer::unregister);
        unregisterRoutes();
        failAll("the device failed to start: " + t.getMessage());
        return Future.failedFuture(t);
      });
  }

  @Override
  public Future<?> stop() {
    // Started (its READY published), whatever state its context's undeployment left it in.
    boolean served = registry.started();
    state = DeviceState.STOPPED;
    unregisterRoutes();
    failAll("the device was undeployed");
    stopWatching.run();
    if (served) {
      registry.publish(DeviceEvent.Type.REMOVED, generation, generation, "the device was undeployed");
    }
    vertx.cancelTimer(statsTimer);
    vertx.cancelTimer(heartbeatTimer);
    vertx.cancelTimer(expiryTimer);
    List<Future<?>> done = new ArrayList<>();
    consumers.forEach(c -> done.add(c.unregister()));
    done.add(registry.stop().otherwiseEmpty());
    if (context != null) {
      done.add(context.stop().otherwiseEmpty());
      context = null;
    }
    done.add(spare.drop());
    return Future.join(done);
  }

  private void unregisterRoutes() {
    LocalRoutes.unregister(vertx, address, route);
    for (Library library : options.getLibraries()) {
      LocalRoutes.unregister(vertx, Addresses.library(node, device, library), route);
    }
  }

  /** The device's stable address. */
  public String address() {
    return address;
  }

  private Future<ContextTier> launch(long gen) {
    ContextTier.Listener listener = new ContextTier.Listener() {
      @Override
      public void lost(String reason) {
        eventLoop.runOnContext(v -> tierLost(gen, reason));
      }

      @Override
      public void stopped() {
        eventLoop.runOnContext(v -> tierStopped(gen));
      }
    };
    return onEventLoop(isolation == Isolation.PROCESS
      ? ProcessContextTier.launch(vertx, options, node, gen, listener)
      : InProcessContextTier.launch(vertx, options, node, gen, listener));
  }

  // A tier's futures complete on its own threads (a link's reader, say); this verticle's state is
  // touched only on its event loop.
  private <T> Future<T> onEventLoop(Future<T> f) {
    return onEventLoop(f, 0);
  }

  // As above, failed with TIMEOUT after {@code timeoutMillis} (0: never): the timeout fires on the
  // event loop too. (Future.timeout on a future of no context would complete it on a timer thread, and a
  // heartbeat given up there once ran the loss beside admission: a request found the device READY
  // with no context and was left to its deadline.)
  private <T> Future<T> onEventLoop(Future<T> f, long timeoutMillis) {
    io.vertx.core.Promise<T> p = io.vertx.core.Promise.promise();
    f.onComplete(ar -> eventLoop.runOnContext(v -> {
      if (ar.succeeded()) {
        p.tryComplete(ar.result());
      } else {
        p.tryFail(ar.cause());
      }
    }));
    if (timeoutMillis > 0) {
      vertx.setTimer(timeoutMillis, id -> eventLoop.runOnContext(v -> p.tryFail(new CudaException(FailureCode.TIMEOUT,
        "no answer within " + timeoutMillis + " ms"))));
    }
    return p.future();
  }

  // Our context is being undeployed by someone else: this device goes down with it (Vert.x
  // undeploys a verticle's children first). No rebuild; everything gets its answer.
  private void tierStopped(long gen) {
    if (gen == generation && state == DeviceState.READY) {
      context = null;
      state = DeviceState.STOPPED;
      failAll("the device is being undeployed");
    }
  }

  /** A context poisoned, or a device host gone on its own (exited, crashed, killed). */
  private void tierLost(long gen, String reason) {
    if (gen == generation && state == DeviceState.READY) {
      contextLost(reason);
    } else if (spare.isFor(gen)) {
      LOG.log(System.Logger.Level.WARNING, address + ": the spare device host was lost: " + reason);
      // Stopped before a new spare starts.
      spare.drop().onComplete(x -> startSpare());
    }
  }

  private void startSpare() {
    if (isolation == Isolation.PROCESS && options.isSpareDeviceHost() && state == DeviceState.READY) {
      spare.start(generation + 1);
    }
  }

  /**
   * An empty buffer with room for {@code bytes} that uploads without a host copy: in process
   * isolation it lies in the shared-memory region. Fill it with the append methods; release it with
   * {@link #releaseTransferBuffer} (or let it become unreachable). Thread-safe.
   */
  public Buffer allocateTransferBuffer(int bytes) {
    if (context == null) {
      throw new CudaException(FailureCode.CONTEXT_LOST, "the device has no ready context");
    }
    return context.allocateTransferBuffer(bytes);
  }

  /**
   * Bytes of transfer buffers and downloads lent to users now and not yet returned (released, or
   * collected once unreachable): this device's shared region in process isolation, plus this JVM's
   * host buffer pool, which every in-process device shares.
   */
  public long heldTransferBytes() {
    ContextTier tier = context;
    return tier == null ? com.vertxcuda.device.impl.HostBufferPool.shared().lentBytes() : tier.heldTransferBytes();
  }

  /** Returns a transfer buffer, or a buffer a download handed back, to its pool at once. */
  public boolean releaseTransferBuffer(Buffer buffer) {
    return context != null && context.releaseTransferBuffer(buffer);
  }

  private void ready(ContextTier tier) {
    context = tier;
    // What waited goes first; only then may local callers submit from their own threads.
    while (!pending.isEmpty()) {
      submit(pending.poll());
    }
    state = DeviceState.READY;
    registry.put();
    startSpare();
  }

  private void accept(Message<Object> message, Library library) {
    // The owner of what the request allocates is the node the event bus says sent it. Fails closed:
    // a request whose sender cannot be identified is refused, never served with no owner.
    String sender = VertxInternals.sender(vertx, message);
    if (sender == null) {
      InFlight.Answer.of(message).fail(new CudaException(FailureCode.FORBIDDEN, "the sender of this request "
        + "could not be identified (the event bus did not name the node that sent it), so what it would "
        + "allocate would have no owner; refused"));
      return;
    }
    accept(inFlight.entry(message.body(), InFlight.Answer.of(message), library, deadline(message), sender));
  }

  /**
   * The local route ({@link LocalRoutes}): a typed client in this JVM on this Vert.x admits its
   * request from its own thread, straight into the context's queue, when the device is ready and no
   * earlier request of the route is still on its way through the event loop; otherwise the request
   * takes its turn on the event loop. The answer completes on the caller's context.
   */
  private final LocalRoutes.Route route = new LocalRoutes.Route() {
    @Override
    public boolean copiesDirectlyTo(String target) {
      return isolation != Isolation.PROCESS && com.vertxcuda.device.context.PeerCopies.direct(address, target);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> Future<T> request(String target, Object body, long timeoutMillis, Context caller) {
      Library library = libraryOf(target);
      io.vertx.core.Promise<Object> promise = io.vertx.core.Promise.promise();
      long deadline = System.nanoTime() + Math.min(timeoutMillis, options.getRequestTimeout()) * 1_000_000;
      InFlight.Entry r = inFlight.entry(body, InFlight.Answer.of(promise, caller), library, deadline, self);
      ContextTier tier = context;
      if (refusedFromClients(r)) {
        // answered
      } else if (state == DeviceState.READY && inFlight.size() >= options.getMaxInFlight()
        && !RequestTable.admitted(r).exemptFromLoad()) {
        // Turned away on the caller's thread: nothing runs, so no order is at stake, and the caller
        // hears it (in a task of its own) instead of behind the burst that filled the device.
        rejectFull(r);
      } else if (state == DeviceState.READY && tier != null && hops.get() == 0
        && RequestTable.admitted(r).admission() != RequestType.Admission.DESCRIBED) {
        submit(r, tier);
      } else {
        hops.incrementAndGet();
        eventLoop.runOnContext(v -> {
          try {
            accept(r);
          } finally {
            // Only once it is admitted may a later local request skip the event loop.
            hops.decrementAndGet();
          }
        });
      }
      return (Future<T>) promise.future();
    }

    @Override
    public Buffer allocateTransferBuffer(int bytes) {
      return DeviceVerticle.this.allocateTransferBuffer(bytes);
    }

    @Override
    public boolean releaseTransferBuffer(Buffer buffer) {
      return DeviceVerticle.this.releaseTransferBuffer(buffer);
    }

    @Override
    public long lendingLimit() {
      ContextTier tier = context;
      return tier == null ? Long.MAX_VALUE : tier.lendingLimit();
    }

    @Override
    public boolean lends(Buffer buffer) {
      ContextTier tier = context;
      return tier != null && tier.lends(buffer);
    }

    @Override
    public Buffer landing(int bytes) {
      ContextTier tier = context;
      return tier == null ? null : tier.landing(bytes);
    }
  };
  /** Local requests on their way to the event loop: while any is, later ones follow it there. */
  private final java.util.concurrent.atomic.AtomicInteger hops = new java.util.concurrent.atomic.AtomicInteger();

  private Library libraryOf(String target) {
    if (target.equals(address)) {
      return null;
    }
    return Library.of(target.substring(target.lastIndexOf('.') + 1));
  }

  // Requests only the device makes for itself are refused from clients (bus or local route).
  private static boolean refusedFromClients(InFlight.Entry r) {
    RequestType<?, ?> type = RequestTable.admitted(r);
    if (!type.fromClients()) {
      r.fail(FailureCode.BAD_REQUEST, "the device does not serve " + type.body().getSimpleName()
        + ": only the device sends it");
      return true;
    }
    return false;
  }

  private void accept(InFlight.Entry r) {
    if (refusedFromClients(r)) {
      return;
    }
    RequestType<?, ?> type = RequestTable.admitted(r);
    if (type.admission() == RequestType.Admission.DESCRIBED) {
      r.reply(info());
      return;
    }
    switch (state) {
      case READY:
        if (inFlight.size() >= options.getMaxInFlight() && !type.exemptFromLoad()) {
          rejectFull(r);
        } else {
          submit(r);
        }
        break;
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
        r.fail(FailureCode.CONTEXT_LOST, lostReason);
        break;
      default:
        r.fail(FailureCode.CONTEXT_LOST, "the device was undeployed");
    }
  }

  private void rejectFull(InFlight.Entry r) {
    r.fail(FailureCode.QUEUE_FULL, "the device has " + inFlight.size() + " requests in flight (maxInFlight "
      + options.getMaxInFlight() + "); try again when some are answered");
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

  private void submit(InFlight.Entry r) {
    ContextTier tier = context;
    if (tier == null) {
      // Not reached while state and context change together on the event loop; a guard, not a path.
      r.fail(FailureCode.CONTEXT_LOST, "the device has no ready context");
      return;
    }
    submit(r, tier);
  }

  // Any thread (the local route calls it from the caller's).
  private void submit(InFlight.Entry r, ContextTier tier) {
    if (RequestTable.admitted(r).admission() == RequestType.Admission.STATS) {
      r.finish(body -> augment((DeviceStats) body));
    }
    tier.submit(r.track());
  }

  // A context whose submission thread is stuck (a hung call, a stopped device host) is as lost as a
  // poisoned one. Liveness is whether that thread turns, which queued user work cannot starve.
  private void heartbeat() {
    if (state != DeviceState.READY || heartbeatOutstanding) {
      return;
    }
    heartbeatOutstanding = true;
    long gen = generation;
    ContextTier tier = context;
    long timeout = options.getHeartbeatTimeout();
    onEventLoop(tier.stalledMillis(), timeout).onComplete(ar -> {
      heartbeatOutstanding = false;
      if (gen != generation || state != DeviceState.READY || context != tier) {
        return;
      }
      if (ar.failed()) {
        contextLost("heartbeat missed: the context tier did not answer within " + timeout + " ms");
      } else if (ar.result() > timeout) {
        contextLost("heartbeat missed: the submission thread has been stuck for " + ar.result() + " ms");
      }
    });
  }

  /** Replaces a lost context: fail what was in flight, bump the generation, rebuild, publish, drain. */
  private void contextLost(String reason) {
    LOG.log(System.Logger.Level.WARNING, address + ": context generation " + generation + " lost: " + reason);
    inFlight.failAll(FailureCode.CONTEXT_LOST, "context generation " + generation + " was lost: " + reason);
    ContextTier old = context;
    context = null;
    if (old != null) {
      old.stop().onFailure(t -> LOG.log(System.Logger.Level.WARNING, "stopping a lost context failed: " + t));
    }
    if (!recoversInProcess()) {
      lost("a sticky CUDA error (" + Backends.processPoisonedBy() + ") poisoned this process's use of the GPU; "
        + "recovery needs process isolation or a restart of the application");
      return;
    }
    long now = System.currentTimeMillis();
    while (!restarts.isEmpty() && now - restarts.peekFirst() > options.getRestartWindow()) {
      restarts.pollFirst();
    }
    if (restarts.size() >= options.getRestartLimit()) {
      lost("restart budget spent: " + restarts.size() + " rebuilds within " + options.getRestartWindow()
        + " ms; last cause: " + reason);
      return;
    }
    restarts.addLast(now);
    long oldGeneration = generation;
    generation = nextGeneration(address, generation);
    state = DeviceState.REBUILDING;
    registry.put();
    spare.takeOrLaunch(generation).onComplete(ar -> {
      if (state != DeviceState.REBUILDING) {
        if (ar.succeeded()) {
          ar.result().stop();
        }
        return;
      }
      if (ar.failed()) {
        lost("rebuilding the context failed: " + ar.cause().getMessage());
        return;
      }
      registry.publish(DeviceEvent.Type.GENERATION_CHANGED, oldGeneration, generation, reason);
      ready(ar.result());
    });
  }

  // A lost context is rebuilt in-process (a hang, a failed start) unless a sticky CUDA error took the
  // whole process's use of the GPU with it (measured on the H200): then the device is LOST instead.
  private boolean recoversInProcess() {
    return isolation == Isolation.PROCESS || Backends.processPoisonedBy() == null;
  }

  private void lost(String reason) {
    state = DeviceState.LOST;
    lostReason = reason;
    LOG.log(System.Logger.Level.ERROR, address + " is LOST: " + reason);
    spare.drop();
    failAll(reason);
    registry.publish(DeviceEvent.Type.LOST, generation, generation, reason);
    registry.put();
  }

  private void failAll(String reason) {
    inFlight.failAll(FailureCode.CONTEXT_LOST, reason);
    while (!pending.isEmpty()) {
      pending.poll().fail(FailureCode.CONTEXT_LOST, reason);
    }
  }

  private DeviceStats augment(DeviceStats s) {
    return s.setGeneration(generation).setState(state).setInFlight(inFlight.size())
      .setQueueDepth(pending.size()).setOperationsServed(inFlight.served()).setFailuresByCode(inFlight.failuresByCode())
      .setSpareReady(spare.ready());
  }

  private DeviceInfo info() {
    DeviceInfo info = context != null ? new DeviceInfo(context.info()) : new DeviceInfo();
    return info.setNode(node).setDevice(device).setAddress(address).setGeneration(generation).setState(state)
      .setIsolation(isolation == Isolation.PROCESS ? "process" : "in-process")
      .setLoad(inFlight.size() + pending.size()).setFreeMemory(freeMemory);
  }

  // Free memory comes from the context's own counters (the control lane answers at once).
  private void refreshFreeMemory() {
    if (state != DeviceState.READY) {
      return;
    }
    own(new com.vertxcuda.message.StatsRequest()).onSuccess(body -> {
      DeviceStats s = (DeviceStats) body;
      long library = s.getLibraryBytes() == null ? 0 : s.getLibraryBytes().values().stream().mapToLong(Long::longValue).sum();
      long limit = options.getMemoryLimit() > 0 ? options.getMemoryLimit() : s.getBackendTotalBytes();
      long free = Math.max(0, limit - s.getBytesAllocated() - library);
      if (s.getBackendFreeBytes() > 0) {
        free = Math.min(free, s.getBackendFreeBytes());
      }
      freeMemory = free;
    });
  }

  /** Frees on the current context what a node that left the cluster still holds here. */
  private void reclaim(String gone) {
    if (state == DeviceState.READY && !gone.equals(self)) {
      own(new ReclaimRequest(gone)).onFailure(t -> LOG.log(System.Logger.Level.WARNING,
        address + ": reclaiming what " + gone + " held failed: " + t.getMessage()));
    }
  }

  // A request of the device's own, straight to the current context: never turned away, and not
  // counted with clients' requests (in flight, served, failures). A context lost meanwhile fails it.
  private Future<Object> own(Object body) {
    io.vertx.core.Promise<Object> promise = io.vertx.core.Promise.promise();
    long deadline = System.nanoTime() + options.getRequestTimeout() * 1_000_000;
    ContextTier tier = context;
    if (tier == null) {
      promise.fail(new CudaException(FailureCode.CONTEXT_LOST, "the device has no ready context"));
      return promise.future();
    }
    tier.submit(new com.vertxcuda.device.spi.Request() {
      @Override public Library library() { return null; }
      @Override public Object body() { return body; }
      @Override public long deadline() { return deadline; }
      @Override public void reply(Object reply) { promise.tryComplete(reply); }
      @Override public void fail(CudaException failure) { promise.tryFail(failure); }
    });
    return onEventLoop(promise.future(), options.getRequestTimeout());
  }

  /** Generations of one address never repeat in this JVM, and start from the clock (µs) so they do not across restarts. */
  private static final java.util.Map<String, Long> LAST_GENERATION = new java.util.concurrent.ConcurrentHashMap<>();

  private static long firstGeneration(String address) {
    return LAST_GENERATION.merge(address, System.currentTimeMillis() * 1000, (last, now) -> Math.max(now, last + 1));
  }

  private static long nextGeneration(String address, long current) {
    return LAST_GENERATION.merge(address, current + 1, Math::max);
  }
}
