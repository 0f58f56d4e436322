package com.vertxcuda.library.blas;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.blas.BlasBatch;
import com.vertxcuda.blas.BlasBatchReply;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasOptions;
import com.vertxcuda.blas.BlasOutcome;
import com.vertxcuda.blas.BlasReply;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.library.blas.GemmGroup.Answer;
import com.vertxcuda.library.blas.GemmGroup.Pending;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceBuffer;
import com.vertxcuda.device.spi.Footprint;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.device.spi.Preparation;
import com.vertxcuda.device.spi.RecordedStep;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.device.spi.RequestType;
import com.vertxcuda.library.impl.EngineResult;
import com.vertxcuda.library.impl.LibraryVerticle;
import com.vertxcuda.library.impl.Operand;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The BLAS library of one context generation. Validates each {@link BlasRequest} into a
 * {@link BlasCall}, orders it after earlier uses of its buffers, queues it on its stream and
 * answers once the device has finished.
 *
 * <p>Small GEMMs of one shape submitted one after another are held in a {@link GemmGroup} and run
 * as one batched call ({@link BlasOptions#getMaxBatchSize()}): the group is queued when a request
 * cannot join it, when it is full, or when the submission thread {@link #flush}es it (before a
 * request of another library or a task, and when its queue runs dry). A dry queue leaves the group
 * held only while an earlier group is still on the GPU ({@link #holdsWhileBusy}): it is flushed
 * the moment that group is done, with whatever joined it meanwhile, so the batches grow to what
 * arrives during one batched call (a client sending a few GEMMs a message leaves the queue dry
 * between messages, and would otherwise get one small call each) and an idle device adds no wait.
 * A {@link BlasBatch} message is served in its order, its calls held exactly as if each had come
 * in a message of its own (so consecutive batches' small GEMMs share batched calls too), and it is
 * answered once, when its last work is done.
 */
public final class BlasVerticle extends LibraryVerticle {

  /** One BLAS call; recordable unless it answers a scalar. */
  private static final RequestType<BlasVerticle, BlasRequest> REQUEST = RequestType.of(BlasVerticle.class, BlasRequest.class)
    .footprint(BlasVerticle::footprint).handler(BlasVerticle::serve).recorder(BlasVerticle::record).build();
  /** Several BLAS calls in one message (a coalescing client's), served in their order. */
  private static final RequestType<BlasVerticle, BlasBatch> BATCH = RequestType.of(BlasVerticle.class, BlasBatch.class)
    .footprint(BlasVerticle::footprint).handler(BlasVerticle::serve).notRecordable("record its requests one by one")
    .build();

  private BlasOptions options;
  private BlasEngine engine;
  private final GemmGroup held = new GemmGroup();
  /** Held groups queued and not yet done on the GPU (counted on the submission thread, done on any). */
  private final AtomicInteger groupsOnGpu = new AtomicInteger();
  /** Set while a group stays held past a dry queue: the last group done asks for a flush. */
  private volatile boolean holding;

  public BlasVerticle(LibraryContext runtime) {
    super(runtime, Library.BLAS);
  }

  @Override
  protected void open() throws BackendException {
    options = new BlasOptions(runtime.libraryOptions(Library.BLAS));
    engine = BlasEngine.open(runtime, stream);
  }

  @Override
  public List<RequestType<?, ?>> types() {
    return List.of(REQUEST, BATCH);
  }

  private Footprint footprint(BlasRequest body) {
    BlasCall call = BlasCall.of(body, runtime);
    return touching(Operand.buffers(call.reads()), Operand.buffers(call.writes())).build();
  }

  private Footprint footprint(BlasBatch body) {
    if (body.getRequests() == null) {
      return Footprint.EVERYTHING;
    }
    List<DeviceBuffer> reads = new ArrayList<>();
    List<DeviceBuffer> writes = new ArrayList<>();
    for (BlasRequest r : body.getRequests()) {
      BlasCall call;
      try {
        call = BlasCall.of(r, runtime);
      } catch (RuntimeException e) {
        continue; // a request that fails its checks touches nothing
      }
      reads.addAll(Operand.buffers(call.reads()));
      writes.addAll(Operand.buffers(call.writes()));
    }
    return touching(reads, writes).build();
  }

  private Preparation serve(Request r, BlasRequest body, Object prepared) {
    BlasCall call = BlasCall.of(body, runtime);
    submit(new Pending(call, answer(r), 0));
    return null;
  }

  private Preparation serve(Request r, BlasBatch body, Object prepared) {
    serveBatch(r, body.getRequests());
    return null;
  }

  /**
   * One BLAS call as a step of a recorded pipeline, queued alone (never batched with others). The
   * reductions that answer a scalar cannot be recorded: a replay returns no values.
   */
  private RecordedStep record(BlasRequest body) {
    BlasCall call = BlasCall.of(body, runtime);
    if (call.isScalar()) {
      throw new CudaException(FailureCode.BAD_REQUEST, call.op() + " answers a scalar, which a replay does not "
        + "return: it cannot be recorded");
    }
    return step(Operand.buffers(call.reads()), Operand.buffers(call.writes()), () -> engine.enqueueRecorded(stream, call),
      null);
  }

  @Override
  public void flush() {
    holding = false;
    if (!held.isEmpty()) {
      // The stream's order reads the lists before run returns; the group is emptied after.
      List<Pending> group = held.members();
      try {
        run(group, held.reads(), held.writes(), true);
      } finally {
        held.take();
      }
    }
  }

  /**
   * The flag is set before the count is read and the count dropped before the flag is read: either
   * this thread sees no group on the GPU and flushes now, or the group that ends last sees the flag
   * and asks for the flush (at worst both, and the second finds nothing held).
   */
  @Override
  public boolean holdsWhileBusy() {
    if (held.isEmpty()) {
      return false;
    }
    holding = true;
    if (groupsOnGpu.get() > 0) {
      return true;
    }
    holding = false;
    return false;
  }

  // A held group is done: if the one behind it waits for that, it is queued now, on the submission thread.
  private void groupDone() {
    if (groupsOnGpu.decrementAndGet() == 0 && holding) {
      runtime.onSubmissionThread(() -> {
        flush();
        return null;
      });
    }
  }

  @Override
  protected void close(boolean poisoned) {
    CudaException stopped = poisoned ? runtime.lostFailure()
      : new CudaException(FailureCode.CONTEXT_LOST, "the BLAS library closed with its context");
    held.take().forEach(p -> p.fail(stopped));
    if (engine != null) {
      engine.close(poisoned);
    }
  }

  // A request of its own: one outcome, its answer.
  private static Answer answer(Request r) {
    return new Answer() {
      @Override
      public void reply(int slot, BlasReply reply) {
        r.reply(reply);
      }

      @Override
      public void fail(int slot, CudaException failure) {
        r.fail(failure);
      }
    };
  }

  /** Whether {@code call} is a GEMM small enough to share a batched call. */
  private boolean batchable(BlasCall call) {
    if (call.op() != BlasOp.GEMM || call.dtype().isComplex()) {
      return false; // the batched path is cublas{S,D}gemmBatched
    }
    BlasRequest r = call.request();
    int limit = options.getMaxBatchedDimension();
    return r.getM() > 0 && r.getN() > 0 && r.getK() > 0 && r.getM() <= limit && r.getN() <= limit && r.getK() <= limit;
  }

  // A small GEMM joins the held group; anything else flushes it and runs alone.
  private void submit(Pending p) {
    if (batchable(p.call()) && options.getMaxBatchSize() >= 2) {
      hold(p);
    } else {
      flush();
      runAlone(p);
    }
  }

  private void hold(Pending p) {
    if (!held.admits(p.call())) {
      flush();
    }
    held.add(p);
    if (held.size() >= options.getMaxBatchSize()) {
      flush();
    }
  }

  private void serveBatch(Request r, List<BlasRequest> requests) {
    if (requests == null || requests.isEmpty()) {
      r.reply(new BlasBatchReply(new ArrayList<>()));
      return;
    }
    if (requests.size() > BlasBatch.MAX_REQUESTS) {
      throw new CudaException(FailureCode.BAD_REQUEST, "requests holds " + requests.size() + " requests; at most "
        + BlasBatch.MAX_REQUESTS + " go in one batch");
    }
    Outcomes outcomes = new Outcomes(r, requests.size());
    for (int i = 0; i < requests.size(); i++) {
      BlasCall call;
      try {
        if (requests.get(i) == null) {
          throw new CudaException(FailureCode.BAD_REQUEST, "requests[" + i + "] is missing");
        }
        call = BlasCall.of(requests.get(i), runtime);
      } catch (RuntimeException e) {
        outcomes.fail(i, runtime.failure(e));
        continue;
      }
      // The same holding as for GEMMs sent one per message: a batch's small GEMMs join the held
      // group, which also takes the next messages' (one batched call across coalesced batches, not
      // one per batch, which would run a few GEMMs per message several times slower than one per message).
      submit(new Pending(call, outcomes, i));
    }
  }

  /** A batch's outcomes, slot by slot: the last one in, on whichever thread, sends the one reply. */
  private static final class Outcomes implements Answer {
    private final Request request;
    private final BlasOutcome[] slots;
    private final AtomicInteger missing;

    Outcomes(Request request, int size) {
      this.request = request;
      this.slots = new BlasOutcome[size];
      this.missing = new AtomicInteger(size);
    }

    @Override
    public void reply(int slot, BlasReply reply) {
      slots[slot] = BlasOutcome.of(reply);
      arrived();
    }

    @Override
    public void fail(int slot, CudaException failure) {
      slots[slot] = BlasOutcome.of(failure);
      arrived();
    }

    // The decrement publishes the slot written before it to the thread that sees zero.
    private void arrived() {
      if (missing.decrementAndGet() == 0) {
        request.reply(new BlasBatchReply(Arrays.asList(slots)));
      }
    }
  }

  /**
   * Queues {@code group} as one device call (one request, or same-shaped GEMMs as one batched call)
   * and answers each of its requests once it is done.
   */
  private void runAlone(Pending p) {
    run(List.of(p), Operand.buffers(p.call().reads()), Operand.buffers(p.call().writes()), false);
  }

  /**
   * {@code reads} and {@code writes}: what the group's calls read and write, for the stream's order;
   * {@code held}: a group flushed from holding, counted while it is on the GPU.
   */
  private void run(List<Pending> group, List<DeviceBuffer> reads, List<DeviceBuffer> writes, boolean held) {
    if (group.isEmpty()) {
      return;
    }
    if (runtime.isPoisoned()) {
      // Held GEMMs flushed after the context was poisoned: it must not be touched again.
      CudaException lost = runtime.lostFailure();
      group.forEach(p -> p.fail(lost));
      return;
    }
    List<BlasCall> calls = new ArrayList<>(group.size());
    for (Pending p : group) {
      calls.add(p.call());
    }
    EngineResult[] result = new EngineResult[1];
    GpuEvent done;
    try {
      done = enqueue(reads, writes, () -> result[0] = calls.size() == 1 ? engine.enqueue(stream, calls.get(0))
        : engine.enqueueGemmBatch(stream, calls));
    } catch (Throwable t) {
      CudaException failure = runtime.failure(t);
      group.forEach(p -> p.fail(failure));
      return;
    }
    int size = calls.size();
    if (held) {
      groupsOnGpu.incrementAndGet();
    }
    runtime.whenDone(done, err -> {
      if (held) {
        groupDone();
      }
      for (Pending p : group) {
        if (err != null) {
          p.fail(runtime.failure(err));
          continue;
        }
        BlasReply reply;
        try {
          double value = result[0] == null ? 0 : result[0].value();
          reply = p.call().reply(value, result[0] == null ? 0 : result[0].imaginary()).setBatchSize(size);
        } catch (RuntimeException e) {
          p.fail(runtime.failure(e));
          continue;
        }
        p.reply(reply);
      }
    });
  }
}
