package com.vertxcuda.library.rand;

import com.vertxcuda.Library;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceMemory;
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
import com.vertxcuda.rand.RandRequest;

import java.util.List;

/**
 * The RAND library of one context generation: validates each {@link RandRequest}, orders the
 * generation after earlier uses of the output, queues it on its stream and answers with the output
 * handle when the device has finished. Generators are made inline, on the submission thread, when a
 * kind is first used (MTGP32: per request, see {@code CudaRandEngine}): the engine keeps where each
 * stands, which only the order of submission decides.
 *
 * <p>A request's numbers are those of its seed, offset (and dimensions): sending it again writes the
 * same numbers, and so does every replay of a pipeline that recorded it. A recorded step generates
 * them once, when it is recorded, into device memory it holds (counted against the memory limit),
 * and each replay copies them into the output, the same on both backends and for every generator.
 * Capturing cuRAND's generate calls instead would not keep that promise: cuRAND does not say what a
 * replayed generate launch writes (a launch repeats the parameters it was captured with, while a
 * generator may keep its state in device memory that each launch advances), and re-seeding, which
 * brings a generator back to the request's position, synchronises, which capture forbids.
 */
public final class RandVerticle extends LibraryVerticle {

  private static final RequestType<RandVerticle, RandRequest> TYPE = RequestType.of(RandVerticle.class, RandRequest.class)
    .footprint(RandVerticle::footprint).handler(RandVerticle::serve).recorder(RandVerticle::record).build();

  private static final System.Logger LOG = System.getLogger(RandVerticle.class.getName());

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

  /**
   * A generation as a step of a recorded pipeline: its numbers are generated now, on this stream,
   * into memory the step holds, and each replay copies them into the output (the pipeline stream
   * waits for this stream once, after recording, so every replay follows the generation).
   */
  private RecordedStep record(RandRequest body) throws BackendException {
    RandCall call = RandCall.of(body, runtime);
    Operand out = call.output();
    long bytes = out.byteExtent();
    runtime.reserveLibraryBytes(Library.RAND, bytes);
    DeviceMemory numbers;
    try {
      numbers = runtime.device().allocate(Math.max(1, bytes));
    } catch (BackendException | RuntimeException e) {
      runtime.releaseLibraryBytes(Library.RAND, bytes);
      throw e;
    }
    Runnable release = new Runnable() {
      private boolean done;

      // Freed once the work queued on this stream so far (the generation, the replays step by step)
      // is done; the pipeline closes its steps after its graph's launches.
      @Override
      public void run() {
        if (done) {
          return;
        }
        done = true;
        runtime.releaseLibraryBytes(Library.RAND, bytes);
        if (runtime.isPoisoned()) {
          return;
        }
        try {
          runtime.afterUses(List.of(runtime.device().record(stream)), () -> free(numbers));
        } catch (BackendException e) {
          LOG.log(System.Logger.Level.WARNING, "releasing a recorded RAND step's numbers failed: " + e.getMessage());
        }
      }
    };
    try {
      engine.enqueue(stream, call.into(numbers));
    } catch (BackendException | RuntimeException e) {
      release.run();
      throw e;
    }
    return step(List.of(), List.of(out.buffer()), () -> runtime.device().copyDeviceToDevice(stream, numbers, 0,
      out.memory(), out.byteOffset(), bytes), null, new long[0], null, release);
  }

  private void free(DeviceMemory numbers) {
    if (runtime.isPoisoned()) {
      return;
    }
    try {
      runtime.device().release(numbers);
    } catch (BackendException e) {
      LOG.log(System.Logger.Level.WARNING, "releasing a recorded RAND step's numbers failed: " + e.getMessage());
    }
  }

  @Override
  protected void close(boolean poisoned) {
    if (engine != null) {
      engine.close(poisoned);
    }
  }
}
