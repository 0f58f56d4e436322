package com.vertxcuda.library.impl;

import com.vertxcuda.Library;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceBuffer;
import com.vertxcuda.device.spi.Footprint;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.device.spi.RecordedStep;
import com.vertxcuda.device.spi.RequestHandler;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;

import java.util.List;
import java.util.function.Consumer;

/**
 * What every library does the same way: on its context's submission thread it creates its stream,
 * opens its engine and registers itself as the library's {@link RequestHandler}, with the
 * descriptors of its request types ({@link #types}); it closes when the context does. The
 * submission loop answers a poisoned context, an unreadable body and a body of no type of the
 * library before a descriptor's handler runs; anything thrown is answered through the context's
 * failure mapping.
 */
public abstract class LibraryVerticle extends VerticleBase implements RequestHandler {

  private static final System.Logger LOG = System.getLogger(LibraryVerticle.class.getName());

  /** The context this library serves (the name {@code context} is Vert.x's). */
  protected final LibraryContext runtime;
  private final Library library;
  protected GpuStream stream;

  protected LibraryVerticle(LibraryContext runtime, Library library) {
    this.runtime = runtime;
    this.library = library;
  }

  @Override
  public final Future<?> start() {
    return runtime.onSubmissionThread(() -> {
      stream = runtime.device().createStream(library.suffix());
      String unavailable = openOrWhyNot();
      if (unavailable == null) {
        runtime.register(library, this);
      } else {
        runtime.unavailable(library, unavailable);
      }
      runtime.onClose(() -> close(runtime.isPoisoned()));
      return null;
    });
  }

  // A library that cannot open (its native library missing, say) answers UNSUPPORTED; the context
  // and the other libraries keep serving. A sticky error fails the start.
  private String openOrWhyNot() throws BackendException {
    String unavailable;
    try {
      open();
      return null;
    } catch (BackendException e) {
      if (e.isSticky()) {
        throw e;
      }
      unavailable = e.getMessage();
    } catch (RuntimeException | LinkageError e) {
      unavailable = e.toString();
    }
    LOG.log(System.Logger.Level.WARNING, "vertx-cuda: the " + library.suffix() + " library is unavailable on "
      + runtime.node() + "/" + runtime.deviceIndex() + ": " + unavailable);
    return unavailable;
  }

  /** Opens the engine on the submission thread, after the stream exists. */
  protected abstract void open() throws BackendException;

  /** Releases the engine on the submission thread; when {@code poisoned}, without calling into the device. */
  protected abstract void close(boolean poisoned);

  /** Orders {@code work} on this library's stream after earlier uses of the buffers it touches. */
  protected GpuEvent enqueue(List<? extends DeviceBuffer> reads, List<? extends DeviceBuffer> writes,
                             LibraryContext.Work work) throws BackendException {
    return runtime.enqueue(stream, reads, writes, work);
  }

  /**
   * A step of a recorded pipeline (what a descriptor's recorder returns) whose {@code work}
   * queues on this library's stream; {@code check} runs before each replay (null: nothing besides
   * the buffers to check).
   */
  protected RecordedStep step(List<? extends DeviceBuffer> reads,
                                                       List<? extends DeviceBuffer> writes,
                                                       LibraryContext.Work work, Runnable check) {
    return step(reads, writes, work, check, new long[0], null);
  }

  /**
   * As above, for a step that also uses what {@code keys} name (footprint keys: a module), which
   * {@code launchedIn} (null: nothing) keeps until a graph launch of the step on another stream is done.
   */
  protected RecordedStep step(List<? extends DeviceBuffer> reads,
                                                       List<? extends DeviceBuffer> writes,
                                                       LibraryContext.Work work, Runnable check, long[] keys,
                                                       Consumer<GpuEvent> launchedIn) {
    return step(reads, writes, work, check, keys, launchedIn, null);
  }

  /**
   * As above, for a step that holds what it made at record (a plan, device memory): {@code close}
   * (null: nothing) releases it, on the submission thread, once the pipeline's uses are done.
   */
  protected RecordedStep step(List<? extends DeviceBuffer> reads, List<? extends DeviceBuffer> writes,
                              LibraryContext.Work work, Runnable check, long[] keys, Consumer<GpuEvent> launchedIn,
                              Runnable close) {
    GpuStream on = stream;
    return new RecordedStep() {
      @Override public GpuStream stream() { return on; }
      @Override public List<? extends DeviceBuffer> reads() { return reads; }
      @Override public List<? extends DeviceBuffer> writes() { return writes; }
      @Override public void issue() throws BackendException { work.enqueue(); }
      @Override public long[] keys() { return keys.clone(); }
      @Override public void launchedIn(GpuEvent event) {
        if (launchedIn != null) {
          launchedIn.accept(event);
        }
      }
      @Override public void check() {
        if (check != null) {
          check.run();
        }
      }
      @Override public void close() {
        if (close != null) {
          close.run();
        }
      }
    };
  }

  /** The footprint of work that reads {@code reads} and writes {@code writes}. */
  protected static Footprint.Builder touching(List<? extends DeviceBuffer> reads,
                                              List<? extends DeviceBuffer> writes) {
    Footprint.Builder b = Footprint.builder();
    reads.forEach(r -> b.read(r.handle()));
    writes.forEach(w -> b.write(w.handle()));
    return b;
  }
}
