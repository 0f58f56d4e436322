package com.vertxcuda.library.fft;

import com.vertxcuda.Library;
import com.vertxcuda.device.host.HostAccess;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.Footprint;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.device.spi.Preparation;
import com.vertxcuda.device.spi.RecordedStep;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.device.spi.RequestType;
import com.vertxcuda.fft.FftOptions;
import com.vertxcuda.fft.FftReply;
import com.vertxcuda.fft.FftRequest;
import com.vertxcuda.library.impl.EngineResult;
import com.vertxcuda.library.impl.LibraryVerticle;

import java.util.List;

/**
 * The FFT library of one context generation: validates each {@link FftRequest}, takes its plan
 * from the LRU plan cache, orders the transform after earlier uses of its buffers, queues it on its
 * stream and answers when the device has finished. A plan not in the cache is made off the
 * submission thread (a Bluestein size takes seconds on the host): the request keeps its place and
 * only requests touching its buffers wait for it. Plans are released when the context closes.
 *
 * <p>A transform recorded as a pipeline step gets a plan of its own, made off the submission thread
 * while the recording waits, counted against the memory limit and destroyed with the pipeline: a
 * cached plan could serve a request on this stream while a replay's graph, on the pipeline stream,
 * uses the same work area.
 */
public final class FftVerticle extends LibraryVerticle {

  private static final RequestType<FftVerticle, FftRequest> TYPE = RequestType.of(FftVerticle.class, FftRequest.class)
    .footprint(FftVerticle::footprint).handler(FftVerticle::serve)
    .recorder(FftVerticle::prepareStep, FftVerticle::recordStep).build();

  private FftEngine engine;
  private PlanCache plans;

  public FftVerticle(LibraryContext runtime) {
    super(runtime, Library.FFT);
  }

  @Override
  protected void open() throws BackendException {
    FftOptions options = new FftOptions(runtime.libraryOptions(Library.FFT));
    engine = FftEngine.open(runtime, stream);
    plans = new PlanCache(options.getPlanCacheSize(), planCacheBytes(options), largestPlanBytes(), engine, runtime);
  }

  // The one place the plan cache's bounds are decided. The budget: the option, or an eighth of the
  // device's memory; on the host backend plans (with what their transforms allocate) live on this
  // JVM's heap, so at most a quarter of it. The cache and the plans outside it then hold at most
  // half the heap, or a quarter and one plan alone: that one plan is bounded by half the heap, so
  // a quarter stays for everything else and for the heap's fragmentation by such large arrays.
  private long planCacheBytes(FftOptions options) throws BackendException {
    if (options.getPlanCacheBytes() > 0) {
      return options.getPlanCacheBytes();
    }
    long budget = runtime.device().memoryInfo()[1] / 8;
    if (HostAccess.isHost(runtime.device())) {
      budget = Math.min(budget, Runtime.getRuntime().maxMemory() / 4);
    }
    return budget;
  }

  private long largestPlanBytes() {
    return HostAccess.isHost(runtime.device()) ? Runtime.getRuntime().maxMemory() / 2 : Long.MAX_VALUE;
  }

  @Override
  public List<RequestType<?, ?>> types() {
    return List.of(TYPE);
  }

  private Footprint footprint(FftRequest body) {
    FftCall call = FftCall.of(body, runtime);
    return touching(call.reads(), call.writes()).build();
  }

  private Preparation serve(Request r, FftRequest body, Object prepared) throws BackendException {
    FftCall call = FftCall.of(body, runtime);
    PlanCache.Entry plan = prepared == null ? plans.get(call.key()) : plans.take(call.key(), prepared);
    if (plan == null) {
      return plans.make(call.key());
    }
    EngineResult[] result = new EngineResult[1];
    GpuEvent done;
    try {
      done = enqueue(call.reads(), call.writes(), () -> result[0] = engine.enqueue(stream, plan.plan, call));
    } catch (BackendException | RuntimeException e) {
      plans.unused(plan);
      throw e;
    }
    plans.used(plan, done);
    boolean reused = prepared == null;
    runtime.replyWhenDone(r, done, () -> {
      if (result[0] != null) {
        result[0].value();
      }
      // The caller's own handle: a complex output is seen by the engines as its real parts (F32,
      // twice the count), a handle the caller's download would refuse.
      return new FftReply(body.getOutput(), reused);
    });
    return null;
  }

  /** A recorded step's own plan: destroyed with the step, or when no step takes it. */
  private final class StepPlan implements AutoCloseable {
    final FftEngine.Plan plan;
    /** Bytes counted against the memory limit (once a step took it). */
    long counted;
    private boolean closed;

    StepPlan(FftEngine.Plan plan) {
      this.plan = plan;
    }

    @Override
    public void close() {
      if (closed) {
        return;
      }
      closed = true;
      engine.destroy(plan, runtime.isPoisoned());
      runtime.releaseLibraryBytes(Library.FFT, counted);
    }
  }

  // Checks the transform (and that its plan may be made at all) now; the plan is made off the
  // submission thread.
  private Preparation prepareStep(FftRequest body) {
    FftPlanKey key = FftCall.of(body, runtime).key();
    plans.admit(key);
    return () -> new StepPlan(engine.plan(key));
  }

  private RecordedStep recordStep(FftRequest body, Object prepared) {
    StepPlan plan = (StepPlan) prepared;
    try {
      FftCall call = FftCall.of(body, runtime);
      runtime.reserveLibraryBytes(Library.FFT, plan.plan.bytes());
      plan.counted = plan.plan.bytes();
      return step(call.reads(), call.writes(), () -> engine.enqueue(stream, plan.plan, call), null, new long[0], null,
        plan::close);
    } catch (RuntimeException e) {
      plan.close();
      throw e;
    }
  }

  @Override
  protected void close(boolean poisoned) {
    if (plans != null) {
      plans.close(poisoned);
    }
  }
}
