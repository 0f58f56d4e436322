package com.vertxcuda.blas.impl;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.Library;
import com.vertxcuda.blas.BlasBatch;
import com.vertxcuda.blas.BlasBatchReply;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasOptions;
import com.vertxcuda.blas.BlasOutcome;
import com.vertxcuda.blas.BlasReply;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.device.context.Allocation;
import com.vertxcuda.device.context.ContextRuntime;
import com.vertxcuda.device.context.Probe;
import com.vertxcuda.device.context.RequestSequencer;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.library.impl.EngineResult;
import com.vertxcuda.library.impl.LibraryVerticle;
import com.vertxcuda.library.impl.Operand;
import io.vertx.core.eventbus.Message;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The BLAS verticle of one context generation. Validates each {@link BlasRequest} into a
 * {@link BlasCall}, orders it after earlier uses of its buffers, queues it on this verticle's
 * stream and replies once the device has finished.
 *
 * <p>With a batching window ({@link BlasOptions#getBatchWindow()}), small GEMMs of one shape are
 * held until the window closes or the batch is full, then run as one batched call; any other
 * request first sends the held batch, so work reaches the stream in arrival order. A
 * {@link BlasBatch} message is served at once, in its order: runs of same-shaped small GEMMs in it
 * become batched calls, and it is answered once, when its last work is done.
 */
public final class BlasVerticle extends LibraryVerticle {

  private static final System.Logger LOG = System.getLogger(BlasVerticle.class.getName());

  /** Where one request's outcome goes: its own message, or its slot in a batch's reply. */
  private interface Answer {
    void reply(BlasReply reply);

    void fail(CudaException failure);
  }

  /** A validated request and where its outcome goes. */
  private record Pending(BlasCall call, Answer answer) {
  }

  /**
   * Requests queued as one device call: one request, or same-shaped GEMMs of which none writes what
   * another touches (they run concurrently).
   */
  private static final class Group {
    final List<Pending> members = new ArrayList<>();
    private final Set<Allocation> written = Collections.newSetFromMap(new IdentityHashMap<>());
    private final Set<Allocation> read = Collections.newSetFromMap(new IdentityHashMap<>());
    private GemmShape shape;

    boolean isEmpty() {
      return members.isEmpty();
    }

    int size() {
      return members.size();
    }

    /** Whether a GEMM of {@code shape} may join this group. */
    boolean admits(BlasCall call, GemmShape shape) {
      Allocation c = call.c().allocation();
      return isEmpty() || shape.equals(this.shape) && !written.contains(c) && !read.contains(c)
        && !written.contains(call.a().allocation()) && !written.contains(call.b().allocation());
    }

    void add(Pending p, GemmShape shape) {
      this.shape = shape;
      members.add(p);
      written.add(p.call().c().allocation());
      read.add(p.call().a().allocation());
      read.add(p.call().b().allocation());
    }
  }

  private BlasOptions options;
  private BlasEngine engine;
  private final List<Message<Object>> heldMessages = new ArrayList<>();
  private Group held = new Group();
  private long heldSince;
  private long batchNumber;

  public BlasVerticle(ContextRuntime runtime) {
    super(runtime, Library.BLAS);
  }

  @Override
  protected void open() throws BackendException {
    options = new BlasOptions(libraryOptions());
    if (options.getBatchWindow() > BlasOptions.MAX_BATCH_WINDOW) {
      LOG.log(System.Logger.Level.WARNING, "BLAS batchWindow " + options.getBatchWindow() + " µs is taken as "
        + BlasOptions.MAX_BATCH_WINDOW + " µs");
      options.setBatchWindow(BlasOptions.MAX_BATCH_WINDOW);
    }
    engine = BlasEngine.open(runtime, stream);
  }

  @Override
  protected void handle(Message<Object> m) throws BackendException {
    if (m.body() instanceof BlasBatch) {
      sendBatch();
      serveBatch(m, ((BlasBatch) m.body()).getRequests());
      return;
    }
    if (!(m.body() instanceof BlasRequest)) {
      sendBatch();
      Failures.fail(m, FailureCode.BAD_REQUEST, "the BLAS verticle does not serve "
        + (m.body() == null ? "an empty message" : m.body().getClass().getSimpleName()));
      return;
    }
    BlasCall call = BlasCall.of((BlasRequest) m.body(), runtime.allocations());
    if (batchable(call) && options.getBatchWindow() > 0 && options.getMaxBatchSize() >= 2) {
      hold(m, call);
      return;
    }
    sendBatch();
    run(List.of(new Pending(call, answer(m))));
  }

  @Override
  protected void close(boolean poisoned) {
    CudaException stopped = runtime.isPoisoned() ? runtime.lostFailure()
      : new CudaException(FailureCode.CONTEXT_LOST, "the BLAS verticle stopped");
    held.members.forEach(p -> p.answer().fail(stopped));
    held = new Group();
    heldMessages.clear();
    if (engine != null) {
      engine.close(poisoned);
    }
  }

  private Answer answer(Message<Object> m) {
    return new Answer() {
      @Override
      public void reply(BlasReply reply) {
        long seq = Probe.ENABLED ? RequestSequencer.of(m) : 0;
        Probe.mark(seq, Probe.Point.COMPLETED);
        m.reply(reply);
        Probe.mark(seq, Probe.Point.REPLIED);
      }

      @Override
      public void fail(CudaException failure) {
        Failures.fail(m, failure);
      }
    };
  }

  // ---- batch messages ----

  private void serveBatch(Message<Object> m, List<BlasRequest> requests) {
    if (requests == null || requests.isEmpty()) {
      m.reply(new BlasBatchReply(new ArrayList<>()));
      return;
    }
    if (requests.size() > BlasBatch.MAX_REQUESTS) {
      Failures.fail(m, FailureCode.BAD_REQUEST, "requests holds " + requests.size() + " requests; at most "
        + BlasBatch.MAX_REQUESTS + " go in one batch");
      return;
    }
    BlasOutcome[] outcomes = new BlasOutcome[requests.size()];
    // The last outcome in, on whichever thread, sends the one reply.
    AtomicInteger missing = new AtomicInteger(outcomes.length);
    Runnable arrived = () -> {
      if (missing.decrementAndGet() == 0) {
        m.reply(new BlasBatchReply(Arrays.asList(outcomes)));
      }
    };
    Group group = new Group();
    for (int i = 0; i < requests.size(); i++) {
      int slot = i;
      Answer answer = new Answer() {
        @Override
        public void reply(BlasReply reply) {
          outcomes[slot] = BlasOutcome.of(reply);
          arrived.run();
        }

        @Override
        public void fail(CudaException failure) {
          outcomes[slot] = BlasOutcome.of(failure);
          arrived.run();
        }
      };
      BlasCall call;
      try {
        if (requests.get(i) == null) {
          throw new CudaException(FailureCode.BAD_REQUEST, "requests[" + i + "] is missing");
        }
        call = BlasCall.of(requests.get(i), runtime.allocations());
      } catch (Throwable t) {
        answer.fail(failure(t));
        continue;
      }
      if (batchable(call)) {
        GemmShape shape = GemmShape.of(call);
        if (group.size() >= MAX_GROUP || !group.admits(call, shape)) {
          run(group.members);
          group = new Group();
        }
        group.add(new Pending(call, answer), shape);
      } else {
        run(group.members);
        group = new Group();
        run(List.of(new Pending(call, answer)));
      }
    }
    run(group.members);
  }

  /** Most GEMMs one batched call of a batch message takes. */
  private static final int MAX_GROUP = 512;

  // ---- requests sent alone, held for a batching window ----

  private boolean batchable(BlasCall call) {
    if (call.op() != BlasOp.GEMM) {
      return false;
    }
    BlasRequest r = call.request();
    int limit = options.getMaxBatchedDimension();
    return r.getM() > 0 && r.getN() > 0 && r.getK() > 0 && r.getM() <= limit && r.getN() <= limit && r.getK() <= limit;
  }

  private void hold(Message<Object> m, BlasCall call) {
    GemmShape shape = GemmShape.of(call);
    if (!held.admits(call, shape)) {
      sendBatch();
    }
    if (held.isEmpty()) {
      heldSince = System.nanoTime();
      closeWindowLater(++batchNumber);
    }
    heldMessages.add(m);
    held.add(new Pending(call, answer(m)), shape);
    holdBack();
    if (held.size() >= options.getMaxBatchSize()) {
      sendBatch();
    }
  }

  // Vert.x timers tick in milliseconds; shorter windows are kept by re-queueing a check on this
  // verticle's own thread, behind the requests that arrived meanwhile.
  private void closeWindowLater(long batch) {
    long window = options.getBatchWindow();
    if (window >= 1000) {
      vertx.setTimer(window / 1000, id -> closeWindow(batch));
    } else {
      context.runOnContext(v -> closeWindow(batch));
    }
  }

  private void closeWindow(long batch) {
    if (batch != batchNumber || held.isEmpty()) {
      return;
    }
    long window = options.getBatchWindow();
    if (window < 1000 && System.nanoTime() - heldSince < window * 1000) {
      context.runOnContext(v -> closeWindow(batch));
      return;
    }
    sendBatch();
  }

  private void sendBatch() {
    if (held.isEmpty()) {
      return;
    }
    List<Message<Object>> messages = new ArrayList<>(heldMessages);
    List<Pending> group = held.members;
    heldMessages.clear();
    held = new Group();
    try {
      run(group);
    } finally {
      // Queued or failed: the held requests no longer keep later ones of other verticles waiting.
      messages.forEach(this::queued);
    }
  }

  // ---- queueing ----

  /**
   * Queues {@code group} as one device call (one request, or same-shaped GEMMs as one batched call)
   * and answers each of its requests once it is done.
   */
  private void run(List<Pending> group) {
    if (group.isEmpty()) {
      return;
    }
    if (runtime.isPoisoned()) {
      // The window closed after the context was poisoned: it must not be touched again.
      CudaException lost = runtime.lostFailure();
      group.forEach(p -> p.answer().fail(lost));
      return;
    }
    List<BlasCall> calls = new ArrayList<>(group.size());
    List<Allocation> reads = new ArrayList<>();
    List<Allocation> writes = new ArrayList<>();
    for (Pending p : group) {
      calls.add(p.call());
      for (Operand o : p.call().reads()) {
        reads.add(o.allocation());
      }
      for (Operand o : p.call().writes()) {
        writes.add(o.allocation());
      }
    }
    EngineResult[] result = new EngineResult[1];
    GpuEvent done;
    try {
      done = enqueue(reads, writes, () -> result[0] = calls.size() == 1 ? engine.enqueue(stream, calls.get(0))
        : engine.enqueueGemmBatch(stream, calls));
    } catch (Throwable t) {
      CudaException failure = failure(t);
      group.forEach(p -> p.answer().fail(failure));
      return;
    }
    int size = calls.size();
    runtime.whenDone(done, err -> {
      for (Pending p : group) {
        if (err != null) {
          p.answer().fail(failure(err));
          continue;
        }
        BlasReply reply;
        try {
          reply = p.call().reply(result[0] == null ? 0 : result[0].value()).setBatchSize(size);
        } catch (RuntimeException e) {
          p.answer().fail(failure(e));
          continue;
        }
        p.answer().reply(reply);
      }
    });
  }
}
