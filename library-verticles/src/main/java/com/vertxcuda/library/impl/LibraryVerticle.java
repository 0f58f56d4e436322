package com.vertxcuda.library.impl;

import com.vertxcuda.Addresses;
import com.vertxcuda.Failures;
import com.vertxcuda.Library;
import com.vertxcuda.codec.CudaCodecs;
import com.vertxcuda.device.context.Allocation;
import com.vertxcuda.device.context.ContextRuntime;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.context.StreamOrdering;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;

import java.util.List;

/**
 * What every library verticle does the same way: on its own worker thread it binds the context,
 * creates its stream, opens its engine and registers at its generation's library address; each
 * request is checked against a poisoned context and every failure goes through
 * {@link ContextRuntime#fail}. Subclasses validate, enqueue and reply.
 */
public abstract class LibraryVerticle extends VerticleBase {

  protected final ContextRuntime runtime;
  private final Library library;
  protected GpuStream stream;
  private MessageConsumer<Object> consumer;

  protected LibraryVerticle(ContextRuntime runtime, Library library) {
    this.runtime = runtime;
    this.library = library;
  }

  @Override
  public final Future<?> start() throws Exception {
    CudaCodecs.register(vertx.eventBus());
    runtime.device().bindCurrentThread();
    stream = runtime.device().createStream(library.suffix());
    open();
    consumer = vertx.eventBus().consumer(
      Addresses.contextLibrary(runtime.node(), runtime.deviceIndex(), runtime.generation(), library), this::receive);
    return consumer.completion();
  }

  @Override
  public final Future<?> stop() {
    close(runtime.isPoisoned());
    return Future.succeededFuture();
  }

  private void receive(Message<Object> m) {
    if (runtime.isPoisoned()) {
      Failures.fail(m, runtime.lostFailure());
      return;
    }
    try {
      handle(m);
    } catch (Throwable t) {
      runtime.fail(m, t);
    }
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
  protected io.vertx.core.json.JsonObject libraryOptions() {
    io.vertx.core.json.JsonObject all = runtime.options().getLibraryOptions();
    io.vertx.core.json.JsonObject mine = all == null ? null : all.getJsonObject(library.suffix());
    return mine == null ? new io.vertx.core.json.JsonObject() : mine;
  }
}
