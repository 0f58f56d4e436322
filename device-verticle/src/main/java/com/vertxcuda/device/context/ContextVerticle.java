package com.vertxcuda.device.context;

import com.vertxcuda.device.spi.IdleWait;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.spi.Backend;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.LibraryProvider;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.internal.CudaRuntime;
import com.vertxcuda.DeviceInfo;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * The inner tier: one CUDA (or host) context incarnation with its allocation table, copy stream and
 * submission loop, and the library verticles it deploys. Every call on the context happens on the
 * loop's one thread; requests reach it through {@link #submit}, not through the event bus, and are
 * answered from where their work completes.
 */
public class ContextVerticle extends VerticleBase {

  private static final System.Logger LOG = System.getLogger(ContextVerticle.class.getName());

  /** What the context tells the tier that deployed it. */
  public interface Listener {
    /** A sticky error poisoned the context (any thread; once). */
    void poisoned(String reason);

    /** The context is being undeployed (by its tier, or by someone else: Vert.x closing). */
    void stopped();
  }

  private final DeviceOptions options;
  private final String node;
  private final long generation;
  private final Listener listener;
  private SubmissionLoop loop;
  private ContextRuntime runtime;
  private DeviceContext device;
  private DeviceOperations operations;

  public ContextVerticle(DeviceOptions options, String node, long generation, Listener listener) {
    this.options = options;
    this.node = node;
    this.generation = generation;
    this.listener = listener;
  }

  @Override
  public Future<?> start() {
    CudaRuntime.of(vertx).registerCodecs();
    Promise<Void> opened = Promise.promise();
    long spin = IdleWait.spinNanos(options);
    String name = "vertx-cuda-" + node + "-" + options.getDevice() + "-g" + generation + "-submit";
    loop = new SubmissionLoop(name, spin, () -> {
      try {
        Backend backend = BackendSelection.select(options);
        if (options.isFaultInjection() && options.getOpenDelay() > 0) {
          Thread.sleep(options.getOpenDelay());
        }
        device = backend.open(options.getDevice());
        AllocationTable table = new AllocationTable(node, options.getDevice(), generation, options.getMemoryLimit(),
          options.getOwnerMemoryQuota());
        runtime = new ContextRuntime(vertx, options, node, generation, backend.name(), device, table, loop,
          listener::poisoned);
        operations = new DeviceOperations(runtime, device.createStream("context"));
        PeerCopies.register(runtime);
        loop.device(operations);
        loop.awaiting(runtime::awaiting);
        loop.hostBuffers(device::releaseHostBuffer);
        loop.refusal(() -> runtime.isPoisoned() ? runtime.lostFailure() : null);
        loop.preparationInit(() -> {
          try {
            device.bindCurrentThread();
          } catch (BackendException e) {
            LOG.log(System.Logger.Level.WARNING, "a preparation thread could not bind the context: " + e.getMessage());
          }
        });
        opened.complete();
      } catch (Throwable t) {
        opened.fail(t);
        throw new IllegalStateException(t);
      }
    });
    loop.start();
    // Back on this verticle's context before deploying: the libraries are its children, so they
    // are undeployed with it.
    Context self = context;
    Promise<Void> here = Promise.promise();
    opened.future().onComplete(ar -> self.runOnContext(v -> here.handle(ar)));
    return here.future().compose(v -> deployLibraries());
  }

  private Future<?> deployLibraries() {
    List<Future<String>> deployed = new ArrayList<>();
    for (LibraryProvider provider : ServiceLoader.load(LibraryProvider.class, getClass().getClassLoader())) {
      Library library = provider.library();
      if (options.getLibraries().contains(library)) {
        deployed.add(vertx.deployVerticle(provider.create(runtime)));
      }
    }
    return Future.all(deployed);
  }

  @Override
  public Future<?> stop() {
    listener.stopped();
    if (runtime != null) {
      PeerCopies.unregister(runtime);
    }
    if (loop == null) {
      return Future.succeededFuture();
    }
    CudaException reason = runtime != null && runtime.isPoisoned() ? runtime.lostFailure()
      : new CudaException(FailureCode.CONTEXT_LOST, "context generation " + generation + " was stopped");
    Promise<Void> closed = Promise.promise();
    loop.close(reason, this::release).whenComplete((v, t) -> closed.tryComplete());
    // A thread stuck in a driver call never gets to release anything: do not wait for it forever.
    long timer = vertx.setTimer(2_000, id -> {
      if (closed.tryComplete()) {
        LOG.log(System.Logger.Level.WARNING, "context generation " + generation
          + ": the submission thread is stuck; its resources are left behind");
      }
    });
    return closed.future().andThen(x -> vertx.cancelTimer(timer));
  }

  // On the submission thread, after every request was answered: libraries, buffers, the context.
  private void release() {
    if (runtime == null) {
      return;
    }
    runtime.runClosers();
    boolean poisoned = runtime.isPoisoned();
    for (Allocation a : runtime.allocations().drain()) {
      runtime.ordering().forget(a);
      if (!poisoned) {
        try {
          device.release(a.memory());
        } catch (BackendException e) {
          LOG.log(System.Logger.Level.WARNING, "release on close failed: " + e.getMessage());
        }
      }
    }
    device.close(poisoned);
  }

  /** Queues a request on this context's one submission path, in its type's lane; any thread. */
  public void submit(Request request) {
    loop.submit(request);
  }

  /** How long the submission thread has been stuck on one item (0 when it turns freely). */
  public long stalledNanos() {
    return loop.stalledNanos();
  }

  /** What the context is, once started (for its tier). */
  public Future<DeviceInfo> describe() {
    return runtime.onSubmissionThread(() -> operations.control().describe());
  }

  /** The runtime its libraries share (for tests and in-process tools). */
  public ContextRuntime runtime() {
    return runtime;
  }
}
