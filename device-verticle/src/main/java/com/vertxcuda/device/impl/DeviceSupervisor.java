package com.vertxcuda.device.impl;

import com.vertxcuda.Addresses;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.device.RequestListener;
import com.vertxcuda.device.context.ContextTier;
import com.vertxcuda.device.context.InFlight;
import com.vertxcuda.device.context.InProcessContextTier;
import com.vertxcuda.device.context.PeerCopies;
import com.vertxcuda.device.isolation.ProcessContextTier;
import com.vertxcuda.device.memory.HostTransferMemory;
import com.vertxcuda.device.nvml.GpuSampler;
import com.vertxcuda.internal.BulkServer;
import com.vertxcuda.internal.ClusterWatch;
import com.vertxcuda.internal.CudaRuntime;
import com.vertxcuda.internal.Nodes;
import com.vertxcuda.internal.ReclaimRequest;
import com.vertxcuda.internal.TransferMemory;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.DeviceState;
import com.vertxcuda.DeviceStats;
import com.vertxcuda.message.StatsRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.Context;
import io.vertx.core.eventbus.MessageConsumer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;

/**
 * What a {@code DeviceVerticle} does, the outer tier of one GPU: a stable address that outlives any
 * number of context incarnations and owns the generation. It supervises: a poisoned, stuck or dead
 * context is replaced, the generation goes up, and subscribers hear of it on the events address
 * ({@link RegistryPublisher}). Requests enter through its {@link Admission} (from the event bus, or
 * from a typed client's own thread), which reads the state and context this class keeps and hands
 * each request straight to the current context tier's one submission queue. Every request accepted
 * gets exactly one reply (the device's one in-flight table, {@link InFlight}); replies leave from
 * where the work completes, not from here. It launches the context tier of the device's isolation:
 * {@link InProcessContextTier} or {@link ProcessContextTier}.
 *
 * <p>Its state lives on the event loop of the verticle that starts it; it never blocks.
 */
public final class DeviceSupervisor {

  // Logged under the verticle's name, the one users know and configure.
  private static final System.Logger LOG = System.getLogger(DeviceVerticle.class.getName());

  private final Vertx vertx;
  private final DeviceOptions options;
  private final RequestListener requestListener;
  private Isolation isolation;
  private String node;
  private int device;
  private String address;
  private Context eventLoop;
  /** This Vert.x's vertx-cuda runtime: its local routes, cluster watch and side channel. */
  private CudaRuntime runtime;

  // Volatile: a stats reply reads them on the thread that completes it.
  private volatile DeviceState state = DeviceState.STARTING;
  private volatile long generation;
  private String lostReason;
  // Volatile: the transfer-buffer methods may be called from any thread.
  private volatile ContextTier context;
  private SpareTier spare;
  private Admission admission;
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
  /** Where this node's bulk side channel listens (clustered only; {@link BulkServer}); null: none. */
  private volatile String bulkAddress;
  private boolean bulkAcquired;
  /** The GPU's NVML meters, read on threads of their own once a context names its PCI bus id; null: none. */
  private volatile GpuSampler gpu;

  /** The device {@code options} describe, on {@code vertx}; {@code requestListener} (null: none) hears every client request's answer. */
  public DeviceSupervisor(Vertx vertx, DeviceOptions options, RequestListener requestListener) {
    this.vertx = vertx;
    this.options = measured(vertx, options, requestListener);
    this.requestListener = requestListener;
  }

  // Phases are measured where someone reads them: the device's spans (a tracer), or the listener.
  private static DeviceOptions measured(Vertx vertx, DeviceOptions options, RequestListener listener) {
    if (options.isMeasurePhases() || !DeviceSpans.traced(vertx) && (listener == null || !listener.wantsPhases())) {
      return options;
    }
    return new DeviceOptions(options).setMeasurePhases(true);
  }

  /** Starts serving; completes once the device's first context is ready. On the verticle's event loop. */
  public Future<?> start() {
    runtime = CudaRuntime.of(vertx);
    runtime.registerCodecs();
    self = Nodes.self(vertx);
    node = options.getNode() != null ? options.getNode() : self;
    device = options.getDevice();
    address = Addresses.device(node, device);
    generation = firstGeneration(address);
    eventLoop = vertx.getOrCreateContext();
    admission = new Admission(vertx, options, address, self, eventLoop, supervised);
    admission.inFlight().listen(address, requestListener);
    isolation = Backends.isolation(options);
    spare = new SpareTier(this::launch, address);
    registry = new RegistryPublisher(vertx, node, device, options, this::info);
    consumers.add(vertx.eventBus().consumer(address, m -> admission.accept(m, null)));
    runtime.routes().register(address, admission.route());
    for (Library library : options.getLibraries()) {
      String a = Addresses.library(node, device, library);
      consumers.add(vertx.eventBus().consumer(a, m -> admission.accept(m, library)));
      runtime.routes().register(a, admission.route());
    }
    // Requests past their deadline are answered TIMEOUT even if their context never answers, and those
    // waiting for a context (it starts, or is rebuilt) when it does not come in time.
    expiryTimer = vertx.setPeriodic(Math.max(10, Math.min(250, options.getRequestTimeout() / 4)),
      id -> admission.expire(System.nanoTime()));
    ClusterWatch watch = runtime.clusterWatch();
    return watch.declarePolicy().compose(v -> watch.checkPolicy()).compose(v -> serveBulk()).compose(v -> launch(generation))
      .onSuccess(tier -> {
        long started = generation;
        // Published once the registry lists it: a watcher asks the registry about a device it has
        // not seen, and must find it there.
        ready(tier).onComplete(x -> registry.publish(DeviceEvent.Type.READY, started, started, "started"));
        // What a node that left the cluster held here goes back.
        stopWatching = watch.onLeft(gone -> eventLoop.runOnContext(x -> reclaim(gone)));
        registry.start();
        statsTimer = vertx.setPeriodic(1_000, id -> refreshFreeMemory());
        heartbeatTimer = vertx.setPeriodic(options.getHeartbeatInterval(), id -> heartbeat());
      })
      .recover(t -> {
        // LOST before anything is answered: a request still on its way to admission (a hop queued on
        // this loop, a sender that looked the route up) is answered from the state, never parked.
        state = DeviceState.LOST;
        lostReason = "the device failed to start: " + t.getMessage();
        vertx.cancelTimer(expiryTimer);
        consumers.forEach(MessageConsumer::unregister);
        unregisterRoutes();
        failAll(lostReason);
        if (bulkAcquired) {
          runtime.releaseBulkServer();
        }
        return Future.failedFuture(t);
      });
  }

  /** Stops serving: everything in flight and waiting is answered, the context stops. */
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
    if (gpu != null) {
      gpu.close();
    }
    vertx.cancelTimer(expiryTimer);
    List<Future<?>> done = new ArrayList<>();
    consumers.forEach(c -> done.add(c.unregister()));
    done.add(registry.stop().otherwiseEmpty());
    if (context != null) {
      done.add(context.stop().otherwiseEmpty());
      context = null;
    }
    done.add(spare.drop());
    if (bulkAcquired) {
      bulkAcquired = false;
      done.add(runtime.releaseBulkServer());
    }
    return Future.join(done);
  }

  // Clustered: the node's bulk side channel (shared by its devices), for remote transfers past 1 MiB.
  // A plain node that cannot serve one still serves everything else (its remote clients hear
  // UNSUPPORTED); a TLS node whose side channel cannot be as protected as its bus fails to deploy.
  private Future<Void> serveBulk() {
    if (!vertx.isClustered()) {
      return Future.succeededFuture();
    }
    BulkServer.Limits limits;
    try {
      limits = new BulkServer.Limits(options.getBulkMaxConnections(), options.getBulkMaxConnectionsPerPeer(),
        options.getBulkHeldBytes());
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(e);
    }
    bulkAcquired = true;
    return runtime.acquireBulkServer(limits).onSuccess(a -> bulkAddress = a).mapEmpty();
  }

  private void unregisterRoutes() {
    runtime.routes().unregister(address, admission.route());
    for (Library library : options.getLibraries()) {
      runtime.routes().unregister(Addresses.library(node, device, library), admission.route());
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
        toEventLoop(() -> tierLost(gen, reason));
      }

      @Override
      public void stopped() {
        toEventLoop(() -> tierStopped(gen));
      }
    };
    return onEventLoop(isolation == Isolation.PROCESS
      ? ProcessContextTier.launch(vertx, options, node, gen, admission.inFlight(), listener)
      : InProcessContextTier.launch(vertx, options, node, gen, listener));
  }

  // A tier's news, from its own thread (a link's reader), on this verticle's event loop; none once the
  // Vert.x has closed (its loops take no task, and nothing is left to supervise): the tier's thread
  // goes on to answer what was on it.
  private void toEventLoop(Runnable news) {
    try {
      eventLoop.runOnContext(v -> news.run());
    } catch (RejectedExecutionException closed) {
      LOG.log(System.Logger.Level.DEBUG, address + ": the context tier's news came after Vert.x closed");
    }
  }

  // A tier's futures complete on its own threads (a link's reader, say); this verticle's state is
  // touched only on its event loop.
  private <T> Future<T> onEventLoop(Future<T> f) {
    return onEventLoop(f, 0);
  }

  // As above, failed with TIMEOUT after {@code timeoutMillis} (0: never): the timeout fires on the
  // event loop too. (Future.timeout on a future of no context would complete it on a timer thread, and a
  // heartbeat given up there would run the loss beside admission: a request could find the device
  // READY with no context and be left to its deadline.)
  private <T> Future<T> onEventLoop(Future<T> f, long timeoutMillis) {
    Promise<T> p = Promise.promise();
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
   * What the device lends its users in this JVM (transfer buffers, landings), charged to its transfer
   * budget: the same memory its local route lends. Thread-safe.
   */
  public TransferMemory transferMemory() {
    return admission.route().transferMemory();
  }

  /**
   * Bytes of this device's transfer budget ({@link DeviceOptions#getTransferBudget()}) in use now:
   * downloads, landings and transfer buffers lent to users and not yet returned, and downloads
   * admitted and not yet answered.
   */
  public long chargedTransferBytes() {
    return admission.chargedBytes();
  }

  /** Serves from {@code tier}; completes once the registry lists the device as READY. */
  private Future<Void> ready(ContextTier tier) {
    context = tier;
    // What waited goes first; only then may local callers submit from their own threads.
    admission.drain(tier);
    state = DeviceState.READY;
    watchGpu(tier);
    Future<Void> listed = registry.put();
    startSpare();
    return listed;
  }

  // A context whose submission thread is stuck (a hung call, a stopped device host) is as lost as a
  // poisoned one. Liveness is whether that thread turns, which queued user work cannot starve.
  private void heartbeat() {
    if (state != DeviceState.READY || heartbeatOutstanding) {
      return;
    }
    startSpare(); // a spare that failed to start is tried again, now and then
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
    admission.contextLost("context generation " + generation + " was lost: " + reason);
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
      String dead = ar.result().lost();
      if (dead != null) {
        // The tier the rebuild took (the spare, say) ended before it was ready: never made READY on a
        // dead device host, nor handed what waits; rebuilt again at once (one more restart).
        ar.result().stop();
        contextLost(dead);
        return;
      }
      registry.publish(DeviceEvent.Type.GENERATION_CHANGED, oldGeneration, generation, reason);
      ready(ar.result());
    });
  }

  // A lost context is rebuilt in-process (a hang, a failed start) unless a sticky CUDA error took the
  // whole process's use of the GPU with it (CUDA keeps such an error for the process's life): then
  // the device is LOST instead.
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
    admission.failAll(reason);
  }

  /**
   * What the device lends while it has no ready context: no transfer buffer (there is no context to
   * upload one to), landings from the host buffer pool, and the limit a tier of its isolation will
   * have, so transfers keep their chunk size across a rebuild.
   */
  private final TransferMemory noContext = new HostTransferMemory() {
    @Override
    public Buffer allocate(int bytes) {
      throw new CudaException(FailureCode.CONTEXT_LOST, "the device has no ready context");
    }

    @Override
    public boolean lends(Buffer buffer) {
      return false;
    }

    @Override
    public long limit() {
      return isolation == Isolation.PROCESS ? ProcessContextTier.lendingLimit(options) : Long.MAX_VALUE;
    }
  };

  /** What admission reads of this device's supervision. */
  private final Admission.Device supervised = new Admission.Device() {
    @Override
    public TransferMemory transferMemory() {
      ContextTier t = context;
      return t != null ? t.transferMemory() : noContext;
    }

    @Override
    public DeviceState state() {
      return state;
    }

    @Override
    public ContextTier tier() {
      return context;
    }

    @Override
    public String lostReason() {
      return lostReason;
    }

    @Override
    public DeviceInfo info() {
      return DeviceSupervisor.this.info();
    }

    @Override
    public DeviceStats supervised(DeviceStats s) {
      GpuSampler sampler = gpu;
      return s.setGeneration(generation).setState(state).setSpareReady(spare.ready())
        .setGpu(sampler == null ? null : sampler.readings());
    }

    @Override
    public boolean copiesDirectlyTo(String target) {
      return isolation != Isolation.PROCESS && PeerCopies.direct(address, target);
    }
  };

  private DeviceInfo info() {
    DeviceInfo info = context != null ? new DeviceInfo(context.info()) : new DeviceInfo();
    return info.setNode(node).setDevice(device).setAddress(address).setGeneration(generation).setState(state)
      .setIsolation(isolation == Isolation.PROCESS ? "process" : "in-process")
      .setLoad(admission.load()).setFreeMemory(freeMemory).setBulkAddress(bulkAddress);
  }

  // Free memory comes from the context's own counters (the control lane answers at once).
  private void refreshFreeMemory() {
    if (state != DeviceState.READY) {
      return;
    }
    own(new StatsRequest()).onSuccess(body -> {
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

  // The GPU outlives its contexts: watched from the first one that names its bus id, whichever
  // process runs it (NVML reads the whole GPU from any process of the machine).
  private void watchGpu(ContextTier tier) {
    String bus = tier.info() == null ? null : tier.info().getPciBusId();
    if (gpu == null && options.getGpuMetersInterval() > 0 && bus != null && !bus.isEmpty()) {
      gpu = GpuSampler.start(bus, options.getGpuMetersInterval());
    }
  }

  /** Frees on the current context what a node that left the cluster still holds here. */
  private void reclaim(String gone) {
    if (state == DeviceState.READY && !gone.equals(self)) {
      own(new ReclaimRequest(gone)).onFailure(t -> LOG.log(System.Logger.Level.WARNING,
        address + ": reclaiming what " + gone + " held failed: " + t.getMessage()));
    }
  }

  // A request of the device's own, straight to the current context: never turned away, and not
  // counted with clients' requests (in flight, served, failures), though an entry of the one table
  // like theirs. A context lost meanwhile fails it.
  private Future<Object> own(Object body) {
    Promise<Object> promise = Promise.promise();
    long deadline = System.nanoTime() + options.getRequestTimeout() * 1_000_000;
    ContextTier tier = context;
    if (tier == null) {
      promise.fail(new CudaException(FailureCode.CONTEXT_LOST, "the device has no ready context"));
      return promise.future();
    }
    tier.submit(admission.inFlight().entry(body, InFlight.Answer.of(promise), null, deadline, null).own().track());
    return onEventLoop(promise.future(), options.getRequestTimeout());
  }

  /** Generations of one address never repeat in this JVM, and start from the clock (µs) so they do not across restarts. */
  private static final Map<String, Long> LAST_GENERATION = new ConcurrentHashMap<>();

  private static long firstGeneration(String address) {
    return LAST_GENERATION.merge(address, System.currentTimeMillis() * 1000, (last, now) -> Math.max(now, last + 1));
  }

  private static long nextGeneration(String address, long current) {
    return LAST_GENERATION.merge(address, current + 1, Math::max);
  }
}
