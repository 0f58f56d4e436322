package com.vertxcuda.fft.impl;

import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.Library;
import com.vertxcuda.device.context.Allocation;
import com.vertxcuda.device.context.ContextRuntime;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.fft.FftOptions;
import com.vertxcuda.fft.FftReply;
import com.vertxcuda.fft.FftRequest;
import com.vertxcuda.library.impl.EngineResult;
import com.vertxcuda.library.impl.LibraryVerticle;
import io.vertx.core.eventbus.Message;

import java.util.List;

/**
 * The FFT verticle of one context generation: validates each {@link FftRequest}, takes its plan
 * from the LRU plan cache (or makes one), orders the transform after earlier uses of its buffers,
 * queues it on this verticle's stream and replies when the device has finished. Plans are released
 * when the verticle stops, as it does when its context is lost.
 */
public final class FftVerticle extends LibraryVerticle {

  private FftEngine engine;
  private PlanCache plans;

  public FftVerticle(ContextRuntime runtime) {
    super(runtime, Library.FFT);
  }

  @Override
  protected void open() throws BackendException {
    FftOptions options = new FftOptions(libraryOptions());
    engine = FftEngine.open(runtime, stream);
    plans = new PlanCache(options.getPlanCacheSize(), engine, runtime.device(), context);
  }

  @Override
  protected void handle(Message<Object> m) throws BackendException {
    if (!(m.body() instanceof FftRequest)) {
      Failures.fail(m, FailureCode.BAD_REQUEST, "the FFT verticle does not serve "
        + (m.body() == null ? "an empty message" : m.body().getClass().getSimpleName()));
      return;
    }
    FftCall call = FftCall.of((FftRequest) m.body(), runtime.allocations());
    PlanCache.Entry cached = plans.get(call.key());
    PlanCache.Entry plan = cached != null ? cached : plans.create(call.key());
    EngineResult[] result = new EngineResult[1];
    // cuFFT's complex-to-real transforms overwrite their input, out of place too: it is ordered as
    // written, and its contents afterwards are unspecified.
    List<Allocation> reads = call.type().isComplexToReal() ? List.of() : List.of(call.input().allocation());
    List<Allocation> writes = call.type().isComplexToReal()
      ? List.of(call.input().allocation(), call.output().allocation()) : List.of(call.output().allocation());
    GpuEvent done = enqueue(reads, writes, () -> result[0] = engine.enqueue(stream, plan.plan, call));
    plan.used(done);
    boolean reused = cached != null;
    runtime.replyWhenDone(m, done, () -> {
      if (result[0] != null) {
        result[0].value();
      }
      return new FftReply(call.output().handle(), reused);
    });
  }

  @Override
  protected void close(boolean poisoned) {
    if (plans != null) {
      plans.close(poisoned);
    }
  }
}
