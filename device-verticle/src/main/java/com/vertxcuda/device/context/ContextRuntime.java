package com.vertxcuda.device.context;

import com.vertxcuda.device.spi.IdleWait;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.Library;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceBuffer;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.device.spi.RequestHandler;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.util.Deque;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One context incarnation as its libraries see it ({@link LibraryContext}): the device context, the
 * allocation table, the stream ordering, the submission loop, and the one place that maps failures
 * and reports a poisoned context to the device tier.
 */
public final class ContextRuntime implements LibraryContext {

  private final Vertx vertx;
  private final DeviceOptions options;
  private final String node;
  private final long generation;
  private final String backend;
  private final DeviceContext device;
  private final AllocationTable allocations;
  private final StreamOrdering ordering;
  private final SubmissionLoop loop;
  /** Completions awaited now. */
  private final AtomicInteger awaited = new AtomicInteger();
  private final Consumer<String> poisoned;
  private final AtomicReference<String> poisonedBy = new AtomicReference<>();
  private final Deque<Runnable> closers = new ConcurrentLinkedDeque<>();

  public ContextRuntime(Vertx vertx, DeviceOptions options, String node, long generation, String backend,
                        DeviceContext device, AllocationTable allocations, SubmissionLoop loop,
                        Consumer<String> poisoned) {
    this.vertx = vertx;
    this.options = options;
    this.node = node;
    this.generation = generation;
    this.backend = backend;
    this.device = device;
    this.allocations = allocations;
    // Phases measured by the device: every run timed; else only while a request that asks is served.
    this.ordering = new StreamOrdering(device, options.isMeasurePhases());
    this.loop = loop;
    loop.timing(ordering);
    this.poisoned = poisoned;
    loop.failures(this::failure);
  }

  @Override public Vertx vertx() { return vertx; }
  public DeviceOptions options() { return options; }
  @Override public String node() { return node; }
  @Override public int deviceIndex() { return options.getDevice(); }
  @Override public long generation() { return generation; }
  @Override public String backend() { return backend; }
  @Override public DeviceContext device() { return device; }
  public AllocationTable allocations() { return allocations; }
  public StreamOrdering ordering() { return ordering; }
  public SubmissionLoop loop() { return loop; }

  @Override
  public JsonObject libraryOptions(Library library) {
    JsonObject all = options.getLibraryOptions();
    JsonObject mine = all == null ? null : all.getJsonObject(library.suffix());
    return mine == null ? new JsonObject() : mine;
  }

  @Override
  public DeviceBuffer resolve(BufferHandle handle, String field, DType... dtypes) {
    return dtypes.length == 0 ? allocations.resolve(handle, field) : allocations.resolve(handle, field, dtypes);
  }

  @Override
  public void reserveLibraryBytes(Library library, long bytes) {
    allocations.reserveLibrary(library.suffix(), bytes);
  }

  @Override
  public void releaseLibraryBytes(Library library, long bytes) {
    allocations.unreserveLibrary(library.suffix(), bytes);
  }

  @Override
  public GpuEvent enqueue(GpuStream stream, List<? extends DeviceBuffer> reads, List<? extends DeviceBuffer> writes,
                          Work work) throws BackendException {
    return ordering.run(stream, reads, writes, work);
  }

  @Override
  public boolean isPoisoned() {
    return poisonedBy.get() != null;
  }

  @Override
  public CudaException lostFailure() {
    return new CudaException(FailureCode.CONTEXT_LOST, "context generation " + generation
      + " was poisoned by " + poisonedBy.get() + "; it is never touched again");
  }

  /**
   * Marks the context poisoned (first caller wins) and tells the device tier, which replaces or
   * gives up the context. After this no call reaches the device.
   */
  public void poison(String reason) {
    if (poisonedBy.compareAndSet(null, reason)) {
      poisoned.accept(reason);
    }
  }

  @Override
  public void register(Library library, RequestHandler handler) {
    if (loop.inLoop()) {
      loop.register(library, handler);
    } else {
      loop.execute(() -> loop.register(library, handler));
    }
  }

  @Override
  public void unavailable(Library library, String reason) {
    CudaException why = new CudaException(FailureCode.UNSUPPORTED, "the " + library.suffix()
      + " library cannot run on this device: " + reason);
    if (loop.inLoop()) {
      loop.refuse(library, why);
    } else {
      loop.execute(() -> loop.refuse(library, why));
    }
  }

  private final List<Consumer<String>> ownerGone = new CopyOnWriteArrayList<>();

  @Override
  public void onOwnerGone(Consumer<String> reclaim) {
    ownerGone.add(reclaim);
  }

  /** Tells every library that {@code owner} left: it frees what that node loaded. On the submission thread. */
  void ownerGone(String owner) {
    for (Consumer<String> c : ownerGone) {
      try {
        c.accept(owner);
      } catch (RuntimeException e) {
        System.getLogger(ContextRuntime.class.getName()).log(System.Logger.Level.WARNING,
          "reclaiming what " + owner + " held failed: " + e);
      }
    }
  }

  @Override
  public void onClose(Runnable closer) {
    closers.addFirst(closer);
  }

  /** Runs the closers (libraries first, then whatever registered before them); on the submission thread. */
  void runClosers() {
    for (Runnable c : closers) {
      try {
        c.run();
      } catch (RuntimeException e) {
        System.getLogger(ContextRuntime.class.getName()).log(System.Logger.Level.WARNING, "closing failed: " + e);
      }
    }
    closers.clear();
  }

  @Override
  public <T> Future<T> onSubmissionThread(Callable<T> task) {
    Promise<T> promise = Promise.promise();
    loop.execute(() -> {
      try {
        promise.complete(task.call());
      } catch (Throwable t) {
        promise.fail(t);
      }
    });
    return promise.future();
  }

  @Override
  public void afterUses(List<GpuEvent> uses, Runnable action) {
    CompletableFuture<?>[] done = uses.stream()
      .map(e -> device.whenComplete(e).whenComplete((v, t) -> e.release()))
      .toArray(CompletableFuture[]::new);
    CompletableFuture.allOf(done).whenComplete((v, t) -> loop.execute(action));
  }

  @Override
  public <T> void replyWhenDone(Request request, GpuEvent event, Supplier<T> reply) {
    whenDone(event, err -> {
      if (err != null) {
        request.fail(failure(err));
        return;
      }
      T body;
      try {
        body = reply.get();
      } catch (RuntimeException e) {
        request.fail(failure(e));
        return;
      }
      request.reply(body);
    });
  }

  @Override
  public void whenDone(GpuEvent event, Consumer<Throwable> then) {
    awaited.incrementAndGet();
    // A timed run (phases measured) hands its times to the answers of the work that awaits its event.
    WorkTiming timing = loop.inLoop() ? ordering.timing(event) : null;
    device.whenComplete(event).whenComplete((v, err) -> {
      // Touched before the count drops: the submission thread never sees the work done and its
      // last activity old at once (IdleWait.pause), so it keeps spinning for the next request.
      loop.touch();
      awaited.decrementAndGet();
      if (timing == null) {
        event.release();
        then.accept(err);
        return;
      }
      // Read before the events go back to the backend, which may record them again at once.
      timing.finish(device, System.nanoTime());
      event.release();
      timing.answering(() -> then.accept(err));
    });
  }

  /** Whether work queued on the GPU is still awaited (the submission loop spins meanwhile). */
  boolean awaiting() {
    return awaited.get() > 0;
  }

  /**
   * A failure as the context tier answers it: {@link Failures} decides the code; a sticky backend
   * error first poisons the context, and reads CONTEXT_LOST naming what poisoned it.
   */
  @Override
  public CudaException failure(Throwable t) {
    String sticky = Failures.stickyCause(t);
    if (sticky != null) {
      poison(sticky);
      return lostFailure();
    }
    return Failures.toCudaException(t);
  }
}
