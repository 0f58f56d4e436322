package com.vertxcuda.library.impl;

import com.vertxcuda.Addresses;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.Library;
import com.vertxcuda.codec.CudaCodecs;
import com.vertxcuda.device.context.Allocation;
import com.vertxcuda.device.context.ContextRuntime;
import com.vertxcuda.device.context.Probe;
import com.vertxcuda.device.context.RequestSequencer;
import com.vertxcuda.device.context.StreamOrdering;
import com.vertxcuda.device.context.UnreadableRequest;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;

import java.util.List;

/**
 * What every library verticle does the same way: on its own worker thread it binds the context,
 * creates its stream, opens its engine and registers at its generation's library address; each
 * request is checked against a poisoned context and every failure goes through
 * {@link ContextRuntime#fail}. Subclasses validate, enqueue and reply.
 */
public abstract class LibraryVerticle extends VerticleBase {

  private static final System.Logger LOG = System.getLogger(LibraryVerticle.class.getName());

  protected final ContextRuntime runtime;
  private final Library library;
  protected GpuStream stream;
  private MessageConsumer<Object> consumer;
  private boolean held;
  private String unavailable;

  protected LibraryVerticle(ContextRuntime runtime, Library library) {
    this.runtime = runtime;
    this.library = library;
  }

  @Override
  public final Future<?> start() throws Exception {
    CudaCodecs.register(vertx.eventBus());
    runtime.device().bindCurrentThread();
    stream = runtime.device().createStream(library.suffix());
    // A library that cannot open (its native library missing, say) answers UNSUPPORTED; the
    // context and the other libraries keep serving.
    try {
      open();
    } catch (BackendException e) {
      if (e.isSticky()) {
        throw e;
      }
      unavailable = e.getMessage();
    } catch (RuntimeException | LinkageError e) {
      unavailable = e.toString();
    }
    if (unavailable != null) {
      LOG.log(System.Logger.Level.WARNING, "vertx-cuda: the " + library.suffix() + " library is unavailable on "
        + runtime.node() + "/" + runtime.deviceIndex() + ": " + unavailable);
    }
    consumer = vertx.eventBus().localConsumer(
      Addresses.contextLibrary(runtime.node(), runtime.deviceIndex(), runtime.generation(), library), this::receive);
    return consumer.completion();
  }

  @Override
  public final Future<?> stop() {
    close(runtime.isPoisoned());
    return Future.succeededFuture();
  }

  private void receive(Message<Object> m) {
    long seq = RequestSequencer.of(m);
    runtime.sequencer().enter(seq, this);
    Probe.mark(seq, Probe.Point.RECEIVED);
    held = false;
    try {
      serve(m);
    } finally {
      if (held) {
        runtime.sequencer().hold(seq, this);
      } else {
        runtime.sequencer().done(seq);
      }
      Probe.mark(seq, Probe.Point.QUEUED);
    }
  }

  private void serve(Message<Object> m) {
    if (runtime.isPoisoned()) {
      Failures.fail(m, runtime.lostFailure());
      return;
    }
    if (UnreadableRequest.answer(m)) {
      return;
    }
    if (unavailable != null) {
      Failures.fail(m, FailureCode.UNSUPPORTED, "the " + library.suffix() + " library cannot run on this device: "
        + unavailable);
      return;
    }
    try {
      handle(m);
    } catch (Throwable t) {
      held = false;
      Failures.fail(m, failure(t));
    }
  }

  /** The typed failure of a request that threw {@code t} (see {@link ContextRuntime#failure}). */
  protected CudaException failure(Throwable t) {
    if (t instanceof ArithmeticException) {
      // Only the checks do exact arithmetic before anything is queued.
      return new CudaException(FailureCode.BAD_REQUEST, "a size, stride or distance of the request overflows: "
        + t.getMessage());
    }
    return runtime.failure(t);
  }

  /**
   * Called from {@link #handle} when the request is held back, not yet queued (a GEMM waiting for
   * its batch): requests forwarded after it to other verticles wait until {@link #queued} says it
   * has claimed its buffers; this verticle's own later requests pass.
   */
  protected void holdBack() {
    held = true;
  }

  /** A request held back earlier has claimed its buffers (or failed). */
  protected void queued(Message<Object> m) {
    runtime.sequencer().done(RequestSequencer.of(m));
  }

  /** Opens the engine on this verticle's thread, after the stream exists. */
  protected abstract void open() throws BackendException;

  /** Serves one request; anything thrown is answered through {@link ContextRuntime#fail}. */
  protected abstract void handle(Message<Object> m) throws Exception;

  /** Releases the engine; when {@code poisoned}, without calling into the device. */
  protected abstract void close(boolean poisoned);

  /** Orders {@code work} on this verticle's stream after earlier uses of the buffers it touches. */
  protected GpuEvent enqueue(List<Allocation> reads, List<Allocation> writes, StreamOrdering.Work work)
    throws BackendException {
    return runtime.ordering().run(stream, reads, writes, work);
  }

  /** This library's settings from {@code DeviceOptions.libraryOptions}. */
  protected JsonObject libraryOptions() {
    JsonObject all = runtime.options().getLibraryOptions();
    JsonObject mine = all == null ? null : all.getJsonObject(library.suffix());
    return mine == null ? new JsonObject() : mine;
  }
}
