package com.vertxcuda.rand.impl;

import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.Library;
import com.vertxcuda.device.context.ContextRuntime;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.library.impl.EngineResult;
import com.vertxcuda.library.impl.LibraryVerticle;
import com.vertxcuda.rand.RandRequest;
import io.vertx.core.eventbus.Message;

import java.util.List;

/**
 * The RAND verticle of one context generation: validates each {@link RandRequest}, orders the
 * generation after earlier uses of the output, queues it on this verticle's stream and replies with
 * the output handle when the device has finished.
 */
public final class RandVerticle extends LibraryVerticle {

  private RandEngine engine;

  public RandVerticle(ContextRuntime runtime) {
    super(runtime, Library.RAND);
  }

  @Override
  protected void open() throws BackendException {
    engine = RandEngine.open(runtime, stream);
  }

  @Override
  protected void handle(Message<Object> m) throws BackendException {
    if (!(m.body() instanceof RandRequest)) {
      Failures.fail(m, FailureCode.BAD_REQUEST, "the RAND verticle does not serve "
        + (m.body() == null ? "an empty message" : m.body().getClass().getSimpleName()));
      return;
    }
    RandCall call = RandCall.of((RandRequest) m.body(), runtime.allocations());
    EngineResult[] result = new EngineResult[1];
    GpuEvent done = enqueue(List.of(), List.of(call.output().allocation()),
      () -> result[0] = engine.enqueue(stream, call));
    runtime.replyWhenDone(m, done, () -> {
      if (result[0] != null) {
        result[0].value();
      }
      return call.output().handle();
    });
  }

  @Override
  protected void close(boolean poisoned) {
    if (engine != null) {
      engine.close(poisoned);
    }
  }
}
