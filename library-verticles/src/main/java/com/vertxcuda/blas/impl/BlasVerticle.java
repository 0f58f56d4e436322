package com.vertxcuda.blas.impl;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.Library;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasOptions;
import com.vertxcuda.blas.BlasReply;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.device.context.Allocation;
import com.vertxcuda.device.context.ContextRuntime;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.library.impl.EngineResult;
import com.vertxcuda.library.impl.LibraryVerticle;
import com.vertxcuda.library.impl.Operand;
import io.vertx.core.eventbus.Message;

import java.util.ArrayList;
import java.util.List;

/**
 * The BLAS verticle of one context generation. Validates each {@link BlasRequest} into a
 * {@link BlasCall}, orders it after earlier uses of its buffers, queues it on this verticle's
 * stream and replies once the device has finished.
 *
 * <p>With a batching window ({@link BlasOptions#getBatchWindow()}), small GEMMs of one shape are
 * held until the window closes or the batch is full, then run as one batched call; any other
 * request first sends the held batch, so work reaches the stream in arrival order.
 */
public final class BlasVerticle extends LibraryVerticle {

  private BlasOptions options;
  private BlasEngine engine;
  private final List<Message<Object>> heldMessages = new ArrayList<>();
  private final List<BlasCall> heldCalls = new ArrayList<>();
  private GemmShape heldShape;
  private long heldSince;
  private long batchNumber;

  public BlasVerticle(ContextRuntime runtime) {
    super(runtime, Library.BLAS);
  }

  @Override
  protected void open() throws BackendException {
    options = new BlasOptions(libraryOptions());
    engine = BlasEngine.open(runtime, stream);
  }

  @Override
  protected void handle(Message<Object> m) throws BackendException {
    if (!(m.body() instanceof BlasRequest)) {
      sendBatch();
      Failures.fail(m, FailureCode.BAD_REQUEST, "the BLAS verticle does not serve "
        + (m.body() == null ? "an empty message" : m.body().getClass().getSimpleName()));
      return;
    }
    BlasCall call = BlasCall.of((BlasRequest) m.body(), runtime.allocations());
    if (batchable(call)) {
      hold(m, call);
      return;
    }
    sendBatch();
    run(m, call);
  }

  @Override
  protected void close(boolean poisoned) {
    for (Message<Object> m : heldMessages) {
      Failures.fail(m, runtime.isPoisoned() ? runtime.lostFailure()
        : new CudaException(FailureCode.CONTEXT_LOST, "the BLAS verticle stopped"));
    }
    heldMessages.clear();
    heldCalls.clear();
    if (engine != null) {
      engine.close(poisoned);
    }
  }

  private void run(Message<Object> m, BlasCall call) throws BackendException {
    EngineResult[] result = new EngineResult[1];
    GpuEvent done = enqueue(call.readAllocations(), call.writeAllocations(),
      () -> result[0] = engine.enqueue(stream, call));
    runtime.replyWhenDone(m, done, () -> call.reply(result[0] == null ? 0 : result[0].value()));
  }

  private boolean batchable(BlasCall call) {
    if (options.getBatchWindow() <= 0 || options.getMaxBatchSize() < 2 || call.op() != BlasOp.GEMM) {
      return false;
    }
    BlasRequest r = call.request();
    int limit = options.getMaxBatchedDimension();
    return r.getM() > 0 && r.getN() > 0 && r.getK() > 0 && r.getM() <= limit && r.getN() <= limit && r.getK() <= limit;
  }

  private void hold(Message<Object> m, BlasCall call) {
    GemmShape shape = GemmShape.of(call);
    if (!heldCalls.isEmpty() && (!shape.equals(heldShape) || conflictsWithHeld(call))) {
      sendBatch();
    }
    if (heldCalls.isEmpty()) {
      heldShape = shape;
      heldSince = System.nanoTime();
      closeWindowLater(++batchNumber);
    }
    heldMessages.add(m);
    heldCalls.add(call);
    holdBack();
    if (heldCalls.size() >= options.getMaxBatchSize()) {
      sendBatch();
    }
  }

  // Calls of one batch run concurrently, so none may write what another touches.
  private boolean conflictsWithHeld(BlasCall call) {
    for (BlasCall held : heldCalls) {
      Allocation c = held.c().allocation();
      if (call.c().allocation() == c || call.a().allocation() == c || call.b().allocation() == c
        || call.c().allocation() == held.a().allocation() || call.c().allocation() == held.b().allocation()) {
        return true;
      }
    }
    return false;
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
    if (batch != batchNumber || heldCalls.isEmpty()) {
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
    if (heldCalls.isEmpty()) {
      return;
    }
    List<Message<Object>> messages = new ArrayList<>(heldMessages);
    List<BlasCall> calls = new ArrayList<>(heldCalls);
    heldMessages.clear();
    heldCalls.clear();
    heldShape = null;
    try {
      enqueueBatch(messages, calls);
    } finally {
      // Queued or failed: the held requests no longer keep later ones of other verticles waiting.
      messages.forEach(this::queued);
    }
  }

  private void enqueueBatch(List<Message<Object>> messages, List<BlasCall> calls) {
    if (runtime.isPoisoned()) {
      // The window closed after the context was poisoned: it must not be touched again.
      messages.forEach(m -> Failures.fail(m, runtime.lostFailure()));
      return;
    }
    if (calls.size() == 1) {
      try {
        run(messages.get(0), calls.get(0));
      } catch (Throwable t) {
        runtime.fail(messages.get(0), t);
      }
      return;
    }
    try {
      List<Allocation> reads = new ArrayList<>();
      List<Allocation> writes = new ArrayList<>();
      for (BlasCall call : calls) {
        reads.addAll(call.readAllocations());
        writes.addAll(call.writeAllocations());
      }
      EngineResult[] result = new EngineResult[1];
      GpuEvent done = enqueue(reads, writes, () -> result[0] = engine.enqueueGemmBatch(stream, calls));
      for (int i = 1; i < calls.size(); i++) {
        done.retain();
      }
      int size = calls.size();
      for (int i = 0; i < size; i++) {
        Operand c = calls.get(i).c();
        runtime.replyWhenDone(messages.get(i), done, () -> {
          if (result[0] != null) {
            result[0].value();
          }
          return new BlasReply().setOutput(c.handle()).setBatchSize(size);
        });
      }
    } catch (Throwable t) {
      messages.forEach(m -> runtime.fail(m, t));
    }
  }
}
