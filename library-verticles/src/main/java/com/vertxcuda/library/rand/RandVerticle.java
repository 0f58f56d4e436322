package com.vertxcuda.library.rand;

import com.vertxcuda.Library;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.Footprint;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.device.spi.Preparation;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.device.spi.RequestType;
import com.vertxcuda.library.impl.EngineResult;
import com.vertxcuda.library.impl.LibraryVerticle;
import com.vertxcuda.rand.RandRequest;

import java.util.List;

/**
 * The RAND library of one context generation: validates each {@link RandRequest}, orders the
 * generation after earlier uses of the output, queues it on its stream and answers with the output
 * handle when the device has finished. Generators are made inline, on the submission thread, when a
 * kind is first used (MTGP32: per request, see {@code CudaRandEngine}): the engine keeps where each
 * stands, which only the order of submission decides.
 */
public final class RandVerticle extends LibraryVerticle {

  private static final RequestType<RandVerticle, RandRequest> TYPE = RequestType.of(RandVerticle.class, RandRequest.class)
    .footprint(RandVerticle::footprint).handler(RandVerticle::serve)
    .notRecordable("seeding a generator for each request re-initialises its state and synchronises").build();

  private RandEngine engine;

  public RandVerticle(LibraryContext runtime) {
    super(runtime, Library.RAND);
  }

  @Override
  protected void open() throws BackendException {
    engine = RandEngine.open(runtime, stream);
  }

  @Override
  public List<RequestType<?, ?>> types() {
    return List.of(TYPE);
  }

  private Footprint footprint(RandRequest body) {
    return Footprint.builder().write(RandCall.of(body, runtime).output().buffer().handle()).build();
  }

  private Preparation serve(Request r, RandRequest body, Object prepared) throws BackendException {
    RandCall call = RandCall.of(body, runtime);
    EngineResult[] result = new EngineResult[1];
    GpuEvent done = enqueue(List.of(), List.of(call.output().buffer()), () -> result[0] = engine.enqueue(stream, call));
    runtime.replyWhenDone(r, done, () -> {
      if (result[0] != null) {
        result[0].value();
      }
      return call.output().handle();
    });
    return null;
  }

  @Override
  protected void close(boolean poisoned) {
    if (engine != null) {
      engine.close(poisoned);
    }
  }
}
