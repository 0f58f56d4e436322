package com.vertxcuda.library.impl;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceBuffer;
import com.vertxcuda.device.spi.Footprint;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.device.spi.Preparation;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.device.spi.RequestHandler;
import com.vertxcuda.device.spi.UnreadableRequest;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;

import java.util.List;

/**
 * What every library does the same way: on its context's submission thread it creates its stream,
 * opens its engine and registers itself as the library's {@link RequestHandler}; it closes when the
 * context does. Each request is checked against a poisoned context and an unreadable body before
 * {@link #serve}; anything thrown is answered through the context's failure mapping.
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
      runtime.register(library, unavailable == null ? this : new Unavailable(library, unavailable));
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

  @Override
  public final Preparation submit(Request request, Object prepared) throws Exception {
    if (runtime.isPoisoned()) {
      request.fail(runtime.lostFailure());
      return null;
    }
    Object body = request.body();
    if (body instanceof UnreadableRequest) {
      throw new CudaException(FailureCode.BAD_REQUEST, "the request cannot be read: "
        + ((UnreadableRequest) body).reason());
    }
    return serve(request, prepared);
  }

  /** Opens the engine on the submission thread, after the stream exists. */
  protected abstract void open() throws BackendException;

  /**
   * Validates, queues and answers one request ({@link RequestHandler#submit}'s contract); anything
   * thrown is answered through the context's failure mapping.
   */
  protected abstract Preparation serve(Request request, Object prepared) throws Exception;

  /** Releases the engine on the submission thread; when {@code poisoned}, without calling into the device. */
  protected abstract void close(boolean poisoned);

  /** The BAD_REQUEST for a body this library does not serve. */
  protected CudaException notServed(Object body) {
    return new CudaException(FailureCode.BAD_REQUEST, "the " + library.suffix() + " library does not serve "
      + (body == null ? "an empty message" : body.getClass().getSimpleName()));
  }

  /** Orders {@code work} on this library's stream after earlier uses of the buffers it touches. */
  protected GpuEvent enqueue(List<? extends DeviceBuffer> reads, List<? extends DeviceBuffer> writes,
                             LibraryContext.Work work) throws BackendException {
    return runtime.enqueue(stream, reads, writes, work);
  }

  /**
   * A step of a recorded pipeline ({@link com.vertxcuda.device.spi.Recordable}) whose {@code work}
   * queues on this library's stream; {@code check} runs before each replay (null: nothing besides
   * the buffers to check).
   */
  protected com.vertxcuda.device.spi.RecordedStep step(List<? extends DeviceBuffer> reads,
                                                       List<? extends DeviceBuffer> writes,
                                                       LibraryContext.Work work, Runnable check) {
    GpuStream on = stream;
    return new com.vertxcuda.device.spi.RecordedStep() {
      @Override public GpuStream stream() { return on; }
      @Override public List<? extends DeviceBuffer> reads() { return reads; }
      @Override public List<? extends DeviceBuffer> writes() { return writes; }
      @Override public void issue() throws BackendException { work.enqueue(); }
      @Override public void check() {
        if (check != null) {
          check.run();
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

  /** Answers every request UNSUPPORTED, naming why the library could not open; refuses recordings the same way. */
  private record Unavailable(Library library, String reason)
    implements RequestHandler, com.vertxcuda.device.spi.Recordable {

    @Override
    public Footprint footprint(Object body) {
      return Footprint.NONE;
    }

    @Override
    public Preparation submit(Request request, Object prepared) {
      request.fail(unsupported());
      return null;
    }

    @Override
    public com.vertxcuda.device.spi.RecordedStep record(Object body) {
      throw unsupported();
    }

    private CudaException unsupported() {
      return new CudaException(FailureCode.UNSUPPORTED, "the " + library.suffix() + " library cannot run on this device: "
        + reason);
    }
  }
}
