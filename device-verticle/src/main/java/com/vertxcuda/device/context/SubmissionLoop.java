package com.vertxcuda.device.context;

import com.vertxcuda.device.spi.IdleWait;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.Library;
import com.vertxcuda.device.spi.Footprint;
import com.vertxcuda.device.spi.Preparation;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.device.spi.RequestHandler;
import com.vertxcuda.device.spi.RequestType;

import io.vertx.core.buffer.Buffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The one ordered submission path of a context: every request for it — the device's own operations
 * and every library's — enters one queue and is validated, resolved and queued on the GPU by one
 * thread, in the order the device accepted it. That order is the order in which requests claim
 * their buffers; nothing else orders them (no sequence numbers, no waits between threads).
 *
 * <p>A request that needs blocking preparation (a plan, a compile) keeps its place while the
 * preparation runs on another thread: later requests that touch what it touches wait behind it,
 * the others go on. A request whose deadline has passed when its turn comes is answered TIMEOUT
 * and never touches the device.
 *
 * <p>When its queue runs dry the thread waits as {@link IdleWait} says: it spins for
 * {@code spinNanos} after the last submission or completion, keeps spinning while work it queued is
 * still on the GPU (the caller of a one-at-a-time FFT or GEMM sends its next request a round trip
 * after the answer, and a parked thread takes tens of microseconds to wake for it), then parks;
 * producers unpark it only when it parked. Liveness ({@link #stalledNanos}) is judged by whether the thread is stuck
 * on one item, which user work queued behind it cannot fake or starve.
 */
public final class SubmissionLoop {

  /** Gives back a prepared host buffer no request took (the context's {@code releaseHostBuffer}). */
  private volatile Predicate<Buffer> hostBuffers = b -> false;
  private static final System.Logger LOG = System.getLogger(SubmissionLoop.class.getName());
  /** The last submission or completion (nanoTime). */
  private volatile long activeAt = System.nanoTime();
  /** {@link #activeAt} as the idle wait reads it (made once: the spin asks it at every step). */
  private final LongSupplier lastActive = () -> activeAt;
  private volatile BooleanSupplier awaiting = () -> false;

  /** A request that waits for its preparation, for an earlier waiting one, or for a transfer to end. */
  private static final class Waiting {
    final Request request;
    final RequestTable.Served served;
    final RequestType<?, ?> type;
    final Footprint footprint;
    State state;
    Object prepared;

    Waiting(Request request, RequestTable.Served served, RequestType<?, ?> type, Footprint footprint, State state) {
      this.request = request;
      this.served = served;
      this.type = type;
      this.footprint = footprint;
      this.state = state;
    }
  }

  private enum State { DEFERRED, PREPARING, READY, HELD }

  /** A place in the order kept for work that goes on outside the loop (a transfer in chunks). */
  public final class Hold {
    private final Waiting entry;

    private Hold(Waiting entry) {
      this.entry = entry;
    }

    /** Gives the place up; on the submission thread. */
    public void release() {
      waiting.remove(entry);
      drain();
    }
  }

  private final String name;
  private final ConcurrentLinkedQueue<Object> queue = new ConcurrentLinkedQueue<>();
  /** Stats and describe: served before queued work, so an overloaded device still answers them at once. */
  private final ConcurrentLinkedQueue<Object> control = new ConcurrentLinkedQueue<>();
  /** Who serves each library and the device's own operations, with their request types. */
  private final RequestTable table = new RequestTable();
  private final List<Waiting> waiting = new ArrayList<>();
  private final AtomicInteger preparing = new AtomicInteger();
  private final long spinNanos;
  private final Thread thread;
  private Function<Throwable, CudaException> failures = Failures::toCudaException;
  private Supplier<CudaException> refusal = () -> null;
  private ExecutorService preparation;
  private Runnable preparationInit = () -> { };
  private RequestHandler lastHandler;
  /** The stream ordering whose runs are timed for a request that measures its phases; set once, in init. */
  private StreamOrdering ordering;
  /** Where in the waiting list a hold taken now goes: the place of the request being submitted from it, or -1 (the end). */
  private int holdAt = -1;
  private volatile boolean running = true;
  private volatile boolean sleeping;
  private volatile long busySince;
  private volatile CudaException closedBy = new CudaException(FailureCode.CONTEXT_LOST, "the context is closed");
  private volatile Runnable last = () -> { };
  private final CompletableFuture<Void> closed = new CompletableFuture<>();

  /**
   * A loop whose thread, once {@link #start}ed, first runs {@code init} (opening the backend there,
   * so the context is current on it).
   */
  public SubmissionLoop(String name, long spinNanos, Runnable init) {
    this.name = name;
    this.spinNanos = Math.max(0, spinNanos);
    this.thread = new Thread(() -> run(init), name);
    thread.setDaemon(true);
  }

  public void start() {
    thread.start();
  }

  /** How failures map (the context's failure mapping, which also notices sticky errors). */
  public void failures(Function<Throwable, CudaException> mapping) {
    this.failures = mapping;
  }

  /** What each preparation thread runs first (binding the context). */
  public void preparationInit(Runnable init) {
    this.preparationInit = init;
  }

  /**
   * Why every request is answered without being served, when it is (a poisoned context); asked
   * before each submission, on the submission thread.
   */
  public void refusal(Supplier<CudaException> why) {
    this.refusal = why;
  }

  /** Serves the device's own operations with {@code handler}; before {@link #start}. */
  public void device(RequestHandler handler) {
    table.register(null, handler);
  }

  /** Serves {@code library} with {@code handler}'s request types; on the submission thread. */
  public void register(Library library, RequestHandler handler) {
    table.register(library, handler);
  }

  /** Answers every request for {@code library} with {@code why} (it could not open); on the submission thread. */
  public void refuse(Library library, CudaException why) {
    table.refuse(library, why);
  }

  /** Who serves {@code library} (the device's own operations for null), or null; on the submission thread. */
  RequestTable.Served served(Library library) {
    return table.served(library);
  }

  /** The libraries registered so far; on the submission thread. */
  public List<Library> registered() {
    return table.libraries();
  }

  /**
   * Queues a request in its type's lane ({@link RequestType#lane}); any thread. After {@link #close}
   * it is answered with the closing failure.
   */
  public void submit(Request request) {
    switch (request.type().lane()) {
      case CONTROL:
        control.add(request);
        break;
      case BESIDE:
        queue.add(new Beside(request));
        break;
      default:
        queue.add(request);
    }
    wake();
  }

  /** A request served outside the order, queued as a task; a closing loop answers it as any request. */
  private final class Beside implements Runnable {
    final Request request;

    Beside(Request request) {
      this.request = request;
    }

    @Override
    public void run() {
      serveBeside(request);
    }
  }

  // Outside the order (an earlier request holds its place): no waiting list, no deadline check.
  private void serveBeside(Request r) {
    taken(r);
    RequestTable.Served served = table.served(r.library());
    try {
      if (served == null) {
        throw notDeployed(r);
      }
      served.submit(served.type(r), r, null);
    } catch (Throwable t) {
      r.fail(failures.apply(t));
    }
  }

  private static CudaException notDeployed(Request r) {
    return new CudaException(FailureCode.UNSUPPORTED, "the " + r.library().suffix()
      + " library is not deployed on this device");
  }

  private Object next() {
    Object item = control.poll();
    return item != null ? item : queue.poll();
  }

  /** Runs {@code task} on the submission thread, in queue order; any thread. */
  public void execute(Runnable task) {
    queue.add(task);
    wake();
  }

  /** Whether the caller is the submission thread. */
  public boolean inLoop() {
    return Thread.currentThread() == thread;
  }

  /**
   * Keeps a place in the order for {@code footprint} until the hold is released: later requests
   * that touch it wait. On the submission thread, while serving the request that needs it.
   */
  public Hold hold(Request request, Footprint footprint) {
    Waiting w = new Waiting(request, null, null, footprint, State.HELD);
    if (holdAt < 0) {
      waiting.add(w);
    } else {
      // Submitted from the waiting list: the hold takes the request's place there, ahead of the
      // later requests still waiting behind it.
      waiting.add(holdAt++, w);
    }
    return new Hold(w);
  }

  /** How long the thread has been on its current item (0 when idle): how a stuck context shows. */
  public long stalledNanos() {
    long since = busySince;
    if (!thread.isAlive() && running) {
      return Long.MAX_VALUE;
    }
    return since == 0 ? 0 : System.nanoTime() - since;
  }

  /** Requests queued or waiting, for stats. */
  public int depth() {
    return queue.size() + control.size() + preparing.get();
  }

  /**
   * Stops the loop: everything queued or waiting is answered with {@code reason}, and so is
   * anything submitted later. After its current item the thread runs {@code last} (releasing what
   * the context holds) and ends; the returned future completes then. A thread stuck in a call never
   * gets there: callers bound their wait.
   */
  public CompletableFuture<Void> close(CudaException reason, Runnable last) {
    if (running) {
      closedBy = reason;
      this.last = last;
      running = false;
      LockSupport.unpark(thread);
      failQueued();
      if (!thread.isAlive()) {
        closed.complete(null);
      }
    }
    return closed;
  }

  public boolean isRunning() {
    return running;
  }

  private void wake() {
    if (!running) {
      failQueued();
    } else if (sleeping) {
      LockSupport.unpark(thread);
    }
  }

  private void failQueued() {
    CudaException reason = closedBy;
    for (Object item; (item = next()) != null; ) {
      if (item instanceof Request) {
        ((Request) item).fail(reason);
      } else if (item instanceof Beside) {
        ((Beside) item).request.fail(reason);
      }
    }
  }

  private void run(Runnable init) {
    try {
      init.run();
    } catch (Throwable t) {
      LOG.log(System.Logger.Level.DEBUG, name + ": start failed: " + t);
      running = false;
      closed.complete(null);
      return;
    }
    while (running) {
      Object item = next();
      if (item == null) {
        if (lastHandler == null || !holdsWhileBusy(lastHandler)) {
          flushLast();
          if (ordering != null) {
            ordering.timeRuns(false);
          }
        }
        item = idle();
        if (item == null) {
          continue;
        }
      }
      busySince = System.nanoTime() | 1;
      try {
        if (item instanceof Request) {
          serve((Request) item);
        } else {
          flushLast();
          ((Runnable) item).run();
        }
      } catch (Throwable t) {
        LOG.log(System.Logger.Level.ERROR, name + ": unexpected failure on the submission thread", t);
      }
      busySince = 0;
    }
    // Answered here too: a request added while the thread ended its last item.
    CudaException reason = closedBy;
    for (Waiting w : waiting) {
      if (w.request != null) {
        w.request.fail(reason);
      }
      discard(w.prepared);
    }
    waiting.clear();
    failQueued();
    if (preparation != null) {
      preparation.shutdownNow();
    }
    try {
      last.run();
    } catch (Throwable t) {
      LOG.log(System.Logger.Level.WARNING, name + ": closing the context failed", t);
    }
    closed.complete(null);
  }

  /** How the context gives back host memory it lent (prepared values no request took); any thread. */
  public void hostBuffers(Predicate<Buffer> release) {
    this.hostBuffers = release;
  }

  /** Whether work this loop queued is still on the GPU now (the loop spins meanwhile, when spinning is on). */
  public void awaiting(BooleanSupplier awaiting) {
    this.awaiting = awaiting;
  }

  /** Work finished (any thread): the next request usually follows within a round trip. */
  public void touch() {
    activeAt = System.nanoTime();
  }

  // Waits as IdleWait says (the next request usually follows at once), then parks until woken.
  private Object idle() {
    activeAt = System.nanoTime();
    while (running) {
      Object item = next();
      if (item != null) {
        return item;
      }
      if (IdleWait.pause(spinNanos, lastActive, awaiting)) {
        continue;
      }
      sleeping = true;
      item = next();
      if (item != null) {
        sleeping = false;
        return item;
      }
      LockSupport.park(this);
      sleeping = false;
    }
    return null;
  }

  private boolean holdsWhileBusy(RequestHandler h) {
    try {
      return h.holdsWhileBusy();
    } catch (Throwable t) {
      LOG.log(System.Logger.Level.ERROR, name + ": asking whether held work may wait failed", t);
      return false;
    }
  }

  private void flushLast() {
    if (lastHandler != null) {
      RequestHandler h = lastHandler;
      lastHandler = null;
      try {
        h.flush();
      } catch (Throwable t) {
        LOG.log(System.Logger.Level.ERROR, name + ": flushing held work failed", t);
      }
    }
  }

  // The request's queue phase ends here, when phases are measured; one that measures its phases has
  // the runs timed until the loop next goes idle (its work may be held and run with others').
  private void taken(Request r) {
    if (r instanceof InFlight.Entry) {
      InFlight.Entry e = (InFlight.Entry) r;
      e.taken();
      if (e.measured() && ordering != null) {
        ordering.timeRuns(true);
      }
    }
  }

  /** The stream ordering whose runs are timed while a request that measures its phases is served. */
  void timing(StreamOrdering ordering) {
    this.ordering = ordering;
  }

  private void serve(Request r) {
    taken(r);
    if (System.nanoTime() - r.deadline() > 0) {
      r.fail(new CudaException(FailureCode.TIMEOUT, "the request's deadline passed before the device reached it"));
      return;
    }
    RequestTable.Served served = table.served(r.library());
    if (served == null) {
      r.fail(notDeployed(r));
      return;
    }
    if (served.handler != lastHandler) {
      flushLast();
    }
    RequestType<?, ?> type = served.type(r);
    if (waiting.isEmpty()) {
      submit(r, served, type, null, null, -1);
      return;
    }
    Footprint f = served.footprint(type, r.body());
    if (blocked(f, waiting.size())) {
      flushLast();
      waiting.add(new Waiting(r, served, type, f, State.DEFERRED));
    } else {
      submit(r, served, type, null, f, -1);
    }
  }

  private boolean blocked(Footprint f, int before) {
    for (int i = 0; i < before; i++) {
      if (waiting.get(i).footprint.conflicts(f)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Submits {@code r}; if it asks for preparation it waits at {@code at} in the waiting list (the
   * end when -1), and so do the holds it takes ({@link #hold}). Returns how many entries it put at
   * {@code at} (none when -1).
   */
  private int submit(Request r, RequestTable.Served served, RequestType<?, ?> type, Object prepared, Footprint f,
                     int at) {
    Preparation p;
    int before = waiting.size();
    holdAt = at;
    try {
      CudaException refused = refusal.get();
      if (refused != null) {
        r.fail(refused);
        discard(prepared); // no handler took it
        return at < 0 ? 0 : waiting.size() - before;
      }
      p = served.submit(type, r, prepared);
      lastHandler = served.handler;
    } catch (Throwable t) {
      r.fail(failures.apply(t));
      return at < 0 ? 0 : waiting.size() - before;
    } finally {
      holdAt = -1;
    }
    int held = at < 0 ? 0 : waiting.size() - before;
    if (p == null) {
      return held;
    }
    at = at < 0 ? at : at + held;
    flushLast();
    Waiting w = new Waiting(r, served, type, f != null ? f : served.footprint(type, r.body()), State.PREPARING);
    if (at < 0) {
      waiting.add(w);
    } else {
      waiting.add(at, w);
    }
    prepare(w, p);
    return held + 1;
  }

  private void prepare(Waiting w, Preparation p) {
    if (preparation == null) {
      preparation = Executors.newCachedThreadPool(task -> {
        Thread t = new Thread(() -> {
          preparationInit.run();
          task.run();
        }, name + "-prepare");
        t.setDaemon(true);
        return t;
      });
    }
    preparing.incrementAndGet();
    preparation.execute(() -> {
      Object value = null;
      Throwable failure = null;
      try {
        value = p.prepare();
      } catch (Throwable t) {
        failure = t;
      }
      Object v = value;
      Throwable f = failure;
      preparing.decrementAndGet();
      execute(() -> prepared(w, v, f));
    });
  }

  private void prepared(Waiting w, Object value, Throwable failure) {
    if (!waiting.contains(w)) {
      discard(value);
      return;
    }
    if (failure != null) {
      waiting.remove(w);
      w.request.fail(failures.apply(failure));
    } else {
      w.prepared = value;
      w.state = State.READY;
    }
    drain();
  }

  // Submits, in order, every waiting request that is ready and has no earlier waiting request
  // touching what it touches.
  private void drain() {
    for (int i = 0; i < waiting.size(); ) {
      Waiting w = waiting.get(i);
      if (w.state == State.PREPARING || w.state == State.HELD || blocked(w.footprint, i)) {
        i++;
        continue;
      }
      waiting.remove(i);
      if (System.nanoTime() - w.request.deadline() > 0) {
        w.request.fail(new CudaException(FailureCode.TIMEOUT, "the request's deadline passed while it waited"));
        discard(w.prepared);
        continue;
      }
      if (w.served.handler != lastHandler) {
        flushLast();
      }
      i += submit(w.request, w.served, w.type, w.prepared, w.footprint, i);
    }
    flushLast();
  }

  // A prepared value no request will take (its request timed out, the context closed) is closed
  // if it can be (a loaded module, a plan), or given back if it is lent host memory (a staged upload,
  // a large download's landing), so nothing waits for a collection.
  private void discard(Object prepared) {
    if (prepared instanceof Buffer) {
      hostBuffers.test((Buffer) prepared);
    } else if (prepared instanceof AutoCloseable) {
      try {
        ((AutoCloseable) prepared).close();
      } catch (Exception e) {
        LOG.log(System.Logger.Level.WARNING, "discarding a prepared value failed: " + e);
      }
    }
  }

}
