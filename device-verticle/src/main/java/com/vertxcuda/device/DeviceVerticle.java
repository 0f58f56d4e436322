package com.vertxcuda.device;

import com.vertxcuda.Addresses;
import com.vertxcuda.CudaException;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.Library;
import com.vertxcuda.Nodes;
import com.vertxcuda.codec.CudaCodecs;
import com.vertxcuda.device.context.Probe;
import com.vertxcuda.device.context.RequestSequencer;
import com.vertxcuda.device.impl.Backends;
import com.vertxcuda.device.impl.ContextTier;
import com.vertxcuda.device.isolation.ProcessContextTier;
import com.vertxcuda.device.impl.ForwardFailures;
import com.vertxcuda.device.impl.InProcessContextTier;
import com.vertxcuda.message.DescribeRequest;
import com.vertxcuda.message.DeviceEvent;
import com.vertxcuda.message.DeviceInfo;
import com.vertxcuda.message.DeviceState;
import com.vertxcuda.message.DeviceStats;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The outer tier of one GPU: a stable address that outlives any number of context incarnations and
 * owns the generation. It deploys the context tier, queues requests (bounded) while there is no
 * ready context, forwards them to the current generation's context and library verticles, and
 * supervises: a poisoned or dead context is replaced, the generation goes up, and subscribers hear
 * of it on the events address. Every request it accepts gets exactly one reply.
 *
 * <p>All of its state lives on its event loop; it never blocks.
 */
public class DeviceVerticle extends VerticleBase {

  private static final System.Logger LOG = System.getLogger(DeviceVerticle.class.getName());

  private DeviceOptions options;
  private Isolation isolation;
  private String node;
  private int device;
  private String address;
  private DeliveryOptions forwardOptions;

  private DeviceState state = DeviceState.STARTING;
  private long generation = 1;
  private String lostReason;
  // Volatile: the transfer-buffer methods may be called from any thread.
  private volatile ContextTier context;
  /** A device host started ahead for generation {@link #spareGeneration} (process isolation). */
  private Future<ContextTier> spare;
  private long spareGeneration;
  private final ArrayDeque<Request> pending = new ArrayDeque<>();
  private final Map<Long, Request> inFlight = new LinkedHashMap<>();
  private long nextRequestId;
  private long sequence;
  private final ArrayDeque<Long> restarts = new ArrayDeque<>();
  private long served;
  private final Map<String, Long> failures = new HashMap<>();
  private final List<MessageConsumer<?>> consumers = new ArrayList<>();
  private long registryTimer = -1;
  private long heartbeatTimer = -1;
  private boolean heartbeatOutstanding;

  /** A device configured by the deployment's config (DeviceOptions JSON). */
  public DeviceVerticle() {
  }

  public DeviceVerticle(DeviceOptions options) {
    this.options = new DeviceOptions(options);
  }

  /** One accepted request: the message to answer and the library it is for (null: the device). */
  private static final class Request {
    final Message<Object> message;
    final Library library;

    Request(Message<Object> message, Library library) {
      this.message = message;
      this.library = library;
    }
  }

  @Override
  public Future<?> start() {
    if (options == null) {
      options = new DeviceOptions(config());
    }
    CudaCodecs.register(vertx.eventBus());
    node = options.getNode() != null ? options.getNode() : Nodes.self(vertx);
    device = options.getDevice();
    address = Addresses.device(node, device);
    forwardOptions = new DeliveryOptions().setSendTimeout(options.getRequestTimeout());
    isolation = Backends.isolation(options);
    consumers.add(vertx.eventBus().consumer(address, m -> accept(m, null)));
    for (Library library : options.getLibraries()) {
      consumers.add(vertx.eventBus().consumer(Addresses.library(node, device, library), m -> accept(m, library)));
    }
    // Local: only this JVM's contexts report here, never another cluster node.
    consumers.add(vertx.eventBus().<Object>localConsumer(Addresses.supervisor(node, device), this::onContextReport));
    return launch(generation)
      .onSuccess(tier -> {
        ready(tier);
        publish(DeviceEvent.Type.READY, generation, generation, "started");
        registryTimer = vertx.setPeriodic(options.getRegistryRefresh(), id -> register());
        heartbeatTimer = vertx.setPeriodic(options.getHeartbeatInterval(), id -> heartbeat());
      })
      .recover(t -> {
        consumers.forEach(MessageConsumer::unregister);
        failAll("the device failed to start: " + t.getMessage());
        return Future.failedFuture(t);
      });
  }

  @Override
  public Future<?> stop() {
    state = DeviceState.STOPPED;
    failAll("the device was undeployed");
    vertx.cancelTimer(registryTimer);
    vertx.cancelTimer(heartbeatTimer);
    List<Future<?>> done = new ArrayList<>();
    consumers.forEach(c -> done.add(c.unregister()));
    done.add(DeviceRegistry.remove(vertx, address).otherwiseEmpty());
    if (context != null) {
      done.add(context.stop().otherwiseEmpty());
      context = null;
    }
    done.add(dropSpare());
    return Future.join(done);
  }

  /** The device's stable address. */
  public String address() {
    return address;
  }

  private Future<ContextTier> launch(long gen) {
    if (isolation == Isolation.PROCESS) {
      return ProcessContextTier.launch(vertx, options, node, gen, reason -> tierLost(gen, reason));
    }
    return InProcessContextTier.launch(vertx, options, node, gen);
  }

  /** A device host gone on its own (exited, crashed, killed). */
  private void tierLost(long gen, String reason) {
    if (gen == generation && state == DeviceState.READY) {
      contextLost(reason);
    } else if (spare != null && gen == spareGeneration) {
      LOG.log(System.Logger.Level.WARNING, address + ": the spare device host was lost: " + reason);
      // Stopped, so its consumers of the next generation's addresses go before a new spare takes them.
      dropSpare().onComplete(x -> startSpare());
    }
  }

  // Process isolation: start the next generation's device host now, so that losing the current
  // one costs a switch, not a process start (about 1.7 s on the H200).
  private void startSpare() {
    if (isolation != Isolation.PROCESS || !options.isSpareDeviceHost() || state != DeviceState.READY
      || spare != null) {
      return;
    }
    spareGeneration = generation + 1;
    spare = launch(spareGeneration);
    spare.onFailure(t -> LOG.log(System.Logger.Level.WARNING, address + ": the spare device host did not start: " + t));
  }

  /** The spare for {@code gen} if there is one that has not failed, else a new launch. */
  private Future<ContextTier> takeSpareOrLaunch(long gen) {
    Future<ContextTier> s = spare;
    spare = null;
    if (s != null && spareGeneration == gen && !s.failed()) {
      return s.recover(t -> launch(gen));
    }
    if (s != null) {
      s.onSuccess(ContextTier::stop);
    }
    return launch(gen);
  }

  private Future<?> dropSpare() {
    Future<ContextTier> s = spare;
    spare = null;
    return s == null ? Future.succeededFuture() : s.compose(ContextTier::stop).otherwiseEmpty();
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

  /** Returns a transfer buffer, or a buffer a download handed back, to its pool at once. */
  public boolean releaseTransferBuffer(Buffer buffer) {
    return context != null && context.releaseTransferBuffer(buffer);
  }

  private void ready(ContextTier tier) {
    context = tier;
    sequence = 0;
    state = DeviceState.READY;
    register();
    while (state == DeviceState.READY && !pending.isEmpty()) {
      forward(pending.poll());
    }
    startSpare();
  }

  private void accept(Message<Object> message, Library library) {
    Request r = new Request(message, library);
    if (library == null && message.body() instanceof DescribeRequest) {
      succeed(r, info());
      return;
    }
    switch (state) {
      case READY:
        if (inFlight.size() >= options.getMaxInFlight()) {
          fail(r, FailureCode.QUEUE_FULL, "the device has " + inFlight.size()
            + " requests in flight (maxInFlight); try again when some are answered");
        } else {
          forward(r);
        }
        break;
      case STARTING:
      case REBUILDING:
        if (pending.size() >= options.getPendingQueueCapacity()) {
          fail(r, FailureCode.QUEUE_FULL, "the device's pending queue holds " + pending.size()
            + " requests while the context is " + (state == DeviceState.STARTING ? "starting" : "rebuilt"));
        } else {
          pending.add(r);
        }
        break;
      case LOST:
        fail(r, FailureCode.CONTEXT_LOST, lostReason);
        break;
      default:
        fail(r, FailureCode.CONTEXT_LOST, "the device was undeployed");
    }
  }

  private void forward(Request r) {
    long id = nextRequestId++;
    long gen = generation;
    inFlight.put(id, r);
    String target = target(gen, r.library);
    DeliveryOptions delivery = forwardOptions;
    long seq = 0;
    if (r.library == null || context.info().getLibraries().contains(r.library.suffix())) {
      // Numbered in arrival order, so the context and libraries claim buffers in that order.
      seq = ++sequence;
      delivery = new DeliveryOptions(forwardOptions).addHeader(RequestSequencer.HEADER, Long.toString(seq));
    }
    Probe.mark(seq, Probe.Point.FORWARDED);
    long numbered = seq;
    vertx.eventBus().request(target, r.message.body(), delivery).onComplete(ar -> {
      Probe.mark(numbered, Probe.Point.ANSWERED);
      if (inFlight.remove(id) == null) {
        return; // already answered when its context was lost
      }
      if (ar.succeeded()) {
        Object body = ar.result().body();
        if (body instanceof DeviceStats) {
          body = augment((DeviceStats) body);
        }
        succeed(r, body);
      } else {
        forwardFailed(r, ar.cause());
      }
    });
  }

  // The generation's addresses, built once per generation rather than per request.
  private long targetsGeneration = -1;
  private final Map<Library, String> targets = new java.util.EnumMap<>(Library.class);
  private String contextTarget;

  private String target(long gen, Library library) {
    if (gen != targetsGeneration) {
      targets.clear();
      contextTarget = Addresses.context(node, device, gen);
      targetsGeneration = gen;
    }
    return library == null ? contextTarget
      : targets.computeIfAbsent(library, l -> Addresses.contextLibrary(node, device, gen, l));
  }

  private void forwardFailed(Request r, Throwable t) {
    CudaException e = ForwardFailures.map(t, r.library != null, generation);
    fail(r, e.code(), Failures.text(e));
  }

  private void onContextReport(Message<Object> message) {
    if (!(message.body() instanceof JsonObject)) {
      return;
    }
    JsonObject report = (JsonObject) message.body();
    long gen = report.getLong("generation", -1L);
    if (gen != generation || state != DeviceState.READY) {
      return; // a report from an incarnation already replaced
    }
    if (report.getBoolean("stopped", false)) {
      // Our context is being undeployed by someone else: this device is going down with it
      // (Vert.x undeploys a verticle's children first). No rebuild; everything gets its answer.
      context = null;
      state = DeviceState.STOPPED;
      failAll("the device is being undeployed");
      return;
    }
    contextLost(report.getString("reason", "unknown"));
  }

  // A context that stops answering (hung thread, stalled device host) is as lost as a poisoned one.
  private void heartbeat() {
    if (state != DeviceState.READY || heartbeatOutstanding) {
      return;
    }
    heartbeatOutstanding = true;
    long gen = generation;
    vertx.eventBus().request(Addresses.context(node, device, gen), new DescribeRequest(),
        new DeliveryOptions().setSendTimeout(options.getHeartbeatTimeout()))
      .onComplete(ar -> {
        heartbeatOutstanding = false;
        if (ar.failed() && gen == generation && state == DeviceState.READY) {
          contextLost("heartbeat missed: " + Failures.toCudaException(ar.cause()).getMessage());
        }
      });
  }

  /** Replaces a lost context: fail what was in flight, bump the generation, rebuild, publish, drain. */
  private void contextLost(String reason) {
    LOG.log(System.Logger.Level.WARNING, address + ": context generation " + generation + " lost: " + reason);
    failInFlight("context generation " + generation + " was lost: " + reason);
    ContextTier old = context;
    context = null;
    if (old != null) {
      old.stop().onFailure(t -> LOG.log(System.Logger.Level.WARNING, "stopping a lost context failed: " + t));
    }
    if (!recoversInProcess(old)) {
      lost("a sticky CUDA error (" + reason + ") poisoned the in-process context; recovery needs process "
        + "isolation or a restart of the application");
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
    generation++;
    state = DeviceState.REBUILDING;
    register();
    takeSpareOrLaunch(generation).onComplete(ar -> {
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
      publish(DeviceEvent.Type.GENERATION_CHANGED, oldGeneration, generation, reason);
      ready(ar.result());
    });
  }

  // The host backend's contexts really are rebuilt in-process; a CUDA context poisoned by a sticky
  // error takes the whole process's use of the GPU with it (measured on the H200), so in-process
  // the device is LOST instead.
  private boolean recoversInProcess(ContextTier old) {
    return isolation == Isolation.PROCESS || old == null || !"cuda".equals(old.info().getBackend());
  }

  private void lost(String reason) {
    state = DeviceState.LOST;
    lostReason = reason;
    LOG.log(System.Logger.Level.ERROR, address + " is LOST: " + reason);
    dropSpare();
    failAll(reason);
    publish(DeviceEvent.Type.LOST, generation, generation, reason);
    register();
  }

  private void failAll(String reason) {
    failInFlight(reason);
    while (!pending.isEmpty()) {
      fail(pending.poll(), FailureCode.CONTEXT_LOST, reason);
    }
  }

  private void failInFlight(String reason) {
    List<Request> lostRequests = new ArrayList<>(inFlight.values());
    inFlight.clear();
    lostRequests.forEach(r -> fail(r, FailureCode.CONTEXT_LOST, reason));
  }

  private void succeed(Request r, Object body) {
    served++;
    r.message.reply(body);
  }

  private void fail(Request r, FailureCode code, String text) {
    failures.merge(code.name(), 1L, Long::sum);
    Failures.fail(r.message, code, text);
  }

  private DeviceStats augment(DeviceStats s) {
    return s.setGeneration(generation).setState(state).setInFlight(inFlight.size())
      .setQueueDepth(pending.size()).setOperationsServed(served).setFailuresByCode(new HashMap<>(failures))
      .setSpareReady(spare != null && spare.succeeded());
  }

  private DeviceInfo info() {
    DeviceInfo info = context != null ? new DeviceInfo(context.info()) : new DeviceInfo();
    return info.setNode(node).setDevice(device).setAddress(address).setGeneration(generation).setState(state)
      .setIsolation(isolation == Isolation.PROCESS ? "process" : "in-process")
      .setLoad(inFlight.size() + pending.size());
  }

  private void publish(DeviceEvent.Type type, long oldGeneration, long newGeneration, String reason) {
    vertx.eventBus().publish(Addresses.events(node, device),
      new DeviceEvent(type, node, device, oldGeneration, newGeneration, reason));
  }

  private void register() {
    if (state == DeviceState.STOPPED) {
      return;
    }
    DeviceRegistry.put(vertx, info(), 3 * options.getRegistryRefresh())
      .onFailure(t -> LOG.log(System.Logger.Level.DEBUG, "registry update failed: " + t));
  }
}
