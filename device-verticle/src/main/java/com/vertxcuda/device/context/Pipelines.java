package com.vertxcuda.device.context;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.PipelineHandle;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceBuffer;
import com.vertxcuda.device.spi.Footprint;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.GraphCapture;
import com.vertxcuda.device.spi.Preparation;
import com.vertxcuda.device.spi.RecordedStep;
import com.vertxcuda.device.spi.RequestType;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.message.PipelineStep;
import com.vertxcuda.message.RecordRequest;
import com.vertxcuda.message.ReleasePipelineRequest;
import com.vertxcuda.message.ReplayRequest;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The recorded pipelines of one context generation, on its submission thread. Recording checks
 * every step through its type's recorder ({@link RequestType#record}), after one preparation off
 * the thread has made what some steps need first (an FFT step's plan); on a backend with
 * {@link GraphCapture} the steps are captured once, from the context's pipeline stream, as one
 * graph, and a replay is one graph launch ordered after earlier uses of every buffer the steps
 * touch. Elsewhere (the host backend, or a capture the backend refused) a replay issues the steps
 * one after another, each ordered like a request of its own. Either way a replay is answered once
 * all of its work is done, and it is checked first: a buffer freed since, or a module unloaded,
 * fails it with the code using them would get, and nothing runs. A release is answered once every
 * use queued before it is done and what the steps held has gone (a transfer buffer a step copies
 * from or into may then be lent again).
 *
 * <p>Each pipeline has an owner, the node that recorded it (as a buffer has): the device holds at
 * most {@code DeviceOptions.maxPipelines} of them and a node at most {@code maxPipelinesPerOwner}
 * (QUEUE_FULL past either), and a node's pipelines are released when it leaves. What a pipeline
 * holds is counted, not measured: its steps' objects, and on cuda the driver's graph, whose memory
 * CUDA does not report and which is not charged to the memory limit (what a step makes, an FFT
 * plan or RAND numbers, its library charges).
 */
final class Pipelines {

  private static final System.Logger LOG = System.getLogger(Pipelines.class.getName());

  private static final class Pipeline {
    final PipelineHandle handle;
    /** The node that recorded it (null: the device itself). */
    final String owner;
    final List<RecordedStep> steps;
    final List<DeviceBuffer> reads;
    final List<DeviceBuffer> writes;
    final GraphCapture.Graph graph;

    Pipeline(PipelineHandle handle, String owner, List<RecordedStep> steps, List<DeviceBuffer> reads,
             List<DeviceBuffer> writes, GraphCapture.Graph graph) {
      this.handle = handle;
      this.owner = owner;
      this.steps = steps;
      this.reads = reads;
      this.writes = writes;
      this.graph = graph;
    }

    void close(boolean poisoned) {
      if (graph != null) {
        graph.close(poisoned);
      }
      steps.forEach(RecordedStep::close);
    }
  }

  private final ContextRuntime runtime;
  private final Map<Long, Pipeline> pipelines = new HashMap<>();
  /** How many pipelines each owner holds. */
  private final Map<String, Integer> owned = new HashMap<>();
  private GpuStream stream;
  private long nextId = ThreadLocalRandom.current().nextLong(1, 1L << 40);

  Pipelines(ContextRuntime runtime) {
    this.runtime = runtime;
    runtime.onOwnerGone(this::ownerGone);
  }

  /**
   * What a replay touches: the pipeline itself (a release waits for it), every buffer of its steps and
   * what else they use (a kernel's module: an unload waits for it); only the pipeline when it names
   * none here.
   */
  Footprint footprint(ReplayRequest r) {
    if (r.getPipeline() == null) {
      return Footprint.NONE;
    }
    Footprint.Builder b = Footprint.builder().readKey(Footprint.pipelineKey(r.getPipeline().id()));
    Pipeline p = pipelines.get(r.getPipeline().id());
    if (p == null) {
      return b.build();
    }
    for (RecordedStep s : p.steps) {
      for (long key : s.keys()) {
        b.readKey(key);
      }
    }
    p.reads.forEach(d -> b.read(d.handle()));
    p.writes.forEach(d -> b.write(d.handle()));
    return b.build();
  }

  /**
   * What a recording touches: what its steps would touch as requests, so that while the plans of its
   * FFT steps are made, only requests on its steps' buffers (a free) wait for it; everything when
   * some step cannot tell.
   */
  Footprint footprint(RecordRequest rr) {
    List<PipelineStep> steps = rr.getSteps();
    if (steps == null || steps.isEmpty() || steps.size() > RecordRequest.MAX_STEPS) {
      return Footprint.EVERYTHING;
    }
    Footprint.Builder b = Footprint.builder();
    for (PipelineStep s : steps) {
      RequestTable.Served served = s == null || s.body() == null ? null : runtime.loop().served(s.library());
      Footprint f = served == null ? Footprint.EVERYTHING : served.footprint(served.type(s.body()), s.body());
      if (f.isEverything()) {
        return Footprint.EVERYTHING;
      }
      b.include(f);
    }
    return b.build();
  }

  /**
   * Records a pipeline: checks every step; when some need something made off the submission thread
   * (an FFT plan) returns the preparation that makes them all, and records once it has run
   * ({@code prepared}, a {@link Made}).
   */
  Preparation record(Request r, RecordRequest rr, Object prepared) throws BackendException {
    Made made = (Made) prepared;
    try {
      List<PipelineStep> steps = rr.getSteps();
      if (steps == null || steps.isEmpty()) {
        throw new CudaException(FailureCode.BAD_REQUEST, "steps is empty: nothing to record");
      }
      if (steps.size() > RecordRequest.MAX_STEPS) {
        throw new CudaException(FailureCode.BAD_REQUEST, "steps holds " + steps.size() + " requests; at most "
          + RecordRequest.MAX_STEPS + " go in one pipeline");
      }
      admit(r.owner());
      if (made == null) {
        Preparation[] preparations = new Preparation[steps.size()];
        boolean any = false;
        for (int i = 0; i < steps.size(); i++) {
          PipelineStep step = steps.get(i);
          preparations[i] = checked(i, step, served -> served.prepareRecording(step.body()));
          any |= preparations[i] != null;
        }
        if (any) {
          return () -> Made.of(preparations, steps);
        }
        made = new Made(new Object[steps.size()]);
      }
      record(r, steps, made);
      return null;
    } finally {
      if (made != null) {
        made.close();
      }
    }
  }

  /** What the steps' preparations made, by step; what no step took is closed with it. */
  private static final class Made implements AutoCloseable {
    private final Object[] results;

    private Made(Object[] results) {
      this.results = results;
    }

    // Runs each step's preparation in order, on a preparation thread; a failure names its step.
    static Made of(Preparation[] preparations, List<PipelineStep> steps) throws Exception {
      Made made = new Made(new Object[preparations.length]);
      for (int i = 0; i < preparations.length; i++) {
        if (preparations[i] == null) {
          continue;
        }
        try {
          made.results[i] = preparations[i].prepare();
        } catch (Exception e) {
          made.close();
          if (e instanceof CudaException c) {
            throw new CudaException(c.code(), "steps[" + i + "] (" + steps.get(i).body().getClass().getSimpleName()
              + "): " + c.getMessage(), c);
          }
          throw e;
        }
      }
      return made;
    }

    /** Step {@code i}'s result, which the step takes (null: none). */
    Object take(int i) {
      Object o = results[i];
      results[i] = null;
      return o;
    }

    @Override
    public void close() {
      for (int i = 0; i < results.length; i++) {
        if (take(i) instanceof AutoCloseable c) {
          try {
            c.close();
          } catch (Exception e) {
            LOG.log(System.Logger.Level.WARNING, "releasing what a pipeline step prepared failed: " + e);
          }
        }
      }
    }
  }

  private void record(Request r, List<PipelineStep> steps, Made made) throws BackendException {
    String owner = r.owner();
    List<RecordedStep> recorded = new ArrayList<>(steps.size());
    GraphCapture.Graph graph = null;
    try {
      for (int i = 0; i < steps.size(); i++) {
        PipelineStep step = steps.get(i);
        Object result = made.take(i);
        recorded.add(checked(i, step, served -> served.record(step.body(), result)));
      }
      LinkedHashSet<DeviceBuffer> reads = new LinkedHashSet<>();
      LinkedHashSet<DeviceBuffer> writes = new LinkedHashSet<>();
      for (RecordedStep s : recorded) {
        reads.addAll(s.reads());
        writes.addAll(s.writes());
      }
      reads.removeAll(writes);
      if (stream == null) {
        stream = runtime.device().createStream("pipeline");
        // Registered after the libraries: graphs go before the libraries' handles and modules.
        runtime.onClose(this::closeAll);
      }
      followSteps(recorded);
      if (runtime.device() instanceof GraphCapture) {
        graph = capture((GraphCapture) runtime.device(), recorded);
      }
      long id = nextId++;
      PipelineHandle handle = PipelineHandle.issue(runtime.node(), runtime.deviceIndex(), runtime.generation(), id,
        recorded.size(), graph != null);
      pipelines.put(id, new Pipeline(handle, owner, recorded, new ArrayList<>(reads), new ArrayList<>(writes), graph));
      if (owner != null) {
        owned.merge(owner, 1, Integer::sum);
      }
      r.reply(handle);
    } catch (Throwable t) {
      if (graph != null) {
        graph.close(runtime.isPoisoned());
      }
      recorded.forEach(RecordedStep::close);
      throw t;
    }
  }

  // What a step queued on its stream while it was recorded (a RAND step's numbers) comes before
  // every replay: the pipeline stream, where graphs launch, waits for the steps' streams once now;
  // a replay step by step runs on the steps' own streams, after it anyway.
  private void followSteps(List<RecordedStep> recorded) throws BackendException {
    LinkedHashSet<GpuStream> streams = new LinkedHashSet<>();
    recorded.forEach(s -> streams.add(s.stream()));
    for (GpuStream s : streams) {
      GpuEvent queued = runtime.device().record(s);
      try {
        runtime.device().await(stream, queued);
      } finally {
        queued.release();
      }
    }
  }

  // QUEUE_FULL, naming the limit, when the device or the owner holds as many pipelines as it may.
  private void admit(String owner) {
    int max = runtime.options().getMaxPipelines();
    if (pipelines.size() >= max) {
      throw new CudaException(FailureCode.QUEUE_FULL, pipelines.size() + " pipelines are recorded on this device, "
        + "its limit (DeviceOptions.maxPipelines = " + max + "); release one first");
    }
    int perOwner = runtime.options().getMaxPipelinesPerOwner();
    int held = owner == null ? 0 : owned.getOrDefault(owner, 0);
    if (owner != null && held >= perOwner) {
      throw new CudaException(FailureCode.QUEUE_FULL, "node " + owner + " holds " + held + " pipelines on this "
        + "device, its limit (DeviceOptions.maxPipelinesPerOwner = " + perOwner + "); release one first");
    }
  }

  /** What the recording does with one step's handler. */
  @FunctionalInterface
  private interface StepCheck<T> {
    T apply(RequestTable.Served served) throws Exception;
  }

  // Checks one step through the handler that would serve it as a request.
  private <T> T checked(int i, PipelineStep step, StepCheck<T> check) {
    String at = "steps[" + i + "]";
    if (step == null || step.body() == null) {
      throw new CudaException(FailureCode.BAD_REQUEST, at + " is missing");
    }
    String what = at + " (" + step.body().getClass().getSimpleName() + ")";
    RequestTable.Served served = runtime.loop().served(step.library());
    if (served == null) {
      throw new CudaException(FailureCode.BAD_REQUEST, what + ": the " + step.library().suffix()
        + " library is not deployed on this device");
    }
    try {
      return check.apply(served);
    } catch (Throwable t) {
      CudaException e = runtime.failure(t);
      if (e.code() == FailureCode.CONTEXT_LOST || e.code() == FailureCode.OUT_OF_MEMORY) {
        throw e;
      }
      // A recording with a bad step is a bad request, whatever was wrong with the step.
      throw new CudaException(FailureCode.BAD_REQUEST, what + " cannot be recorded: " + e.code() + ": " + e.getMessage());
    }
  }

  // Captures the steps as one graph; a capture the backend refuses (not a sticky error) leaves the
  // pipeline to run step by step, which the handle says.
  private GraphCapture.Graph capture(GraphCapture backend, List<RecordedStep> recorded) throws BackendException {
    List<GraphCapture.Step> steps = new ArrayList<>(recorded.size());
    for (RecordedStep s : recorded) {
      steps.add(new GraphCapture.Step(s.stream(), s::issue));
    }
    try {
      return backend.capture(stream, steps);
    } catch (BackendException e) {
      if (e.isSticky()) {
        throw e;
      }
      LOG.log(System.Logger.Level.WARNING, "vertx-cuda: capturing a pipeline of " + recorded.size()
        + " steps as a CUDA graph failed (" + e.getMessage() + "); it replays step by step");
      return null;
    }
  }

  void replay(Request r, ReplayRequest rr) throws BackendException {
    Pipeline p = resolve(rr.getPipeline());
    // Every buffer must still be the one recorded: a freed one fails as using it would.
    for (List<DeviceBuffer> list : List.of(p.reads, p.writes)) {
      for (DeviceBuffer b : list) {
        if (runtime.allocations().resolve(b.handle(), "a buffer of " + p.handle) != b) {
          throw new CudaException(FailureCode.NOT_FOUND, "a buffer of " + p.handle + " was replaced");
        }
      }
    }
    p.steps.forEach(RecordedStep::check);
    PipelineHandle handle = p.handle;
    if (p.graph != null) {
      GpuEvent done = runtime.ordering().run(stream, p.reads, p.writes, () -> p.graph.launch(stream));
      // The graph ran on the pipeline stream, not on the steps' own: what they use (a module) waits for it.
      p.steps.forEach(s -> s.launchedIn(done));
      runtime.replyWhenDone(r, done, () -> handle);
      return;
    }
    List<GpuEvent> events = new ArrayList<>(p.steps.size());
    try {
      for (RecordedStep s : p.steps) {
        events.add(runtime.ordering().run(s.stream(), s.reads(), s.writes(), s::issue));
      }
    } catch (BackendException | RuntimeException e) {
      // What was queued runs; the replay answers once it has, with this failure.
      answerAfter(r, events, runtime.failure(e), handle);
      return;
    }
    answerAfter(r, events, null, handle);
  }

  private void answerAfter(Request r, List<GpuEvent> events, CudaException failed, PipelineHandle handle) {
    if (events.isEmpty()) {
      if (failed != null) {
        r.fail(failed);
      } else {
        r.reply(handle);
      }
      return;
    }
    AtomicInteger missing = new AtomicInteger(events.size());
    AtomicReference<CudaException> failure = new AtomicReference<>(failed);
    for (GpuEvent e : events) {
      runtime.whenDone(e, err -> {
        if (err != null) {
          failure.compareAndSet(null, runtime.failure(err));
        }
        if (missing.decrementAndGet() == 0) {
          CudaException f = failure.get();
          if (f != null) {
            r.fail(f);
          } else {
            r.reply(handle);
          }
        }
      });
    }
  }

  // Answered once what the pipeline held has gone (its uses done): the memory of a transfer buffer
  // one of its steps copies from or into may then be lent again, by this JVM or the one that lent it.
  void release(Request r, ReleasePipelineRequest rr) throws BackendException {
    Pipeline p = resolve(rr.getPipeline());
    remove(p, () -> r.reply(p.handle));
  }

  // A node left: its pipelines go as a release would take them. On the submission thread.
  private void ownerGone(String owner) {
    if (!owned.containsKey(owner)) {
      return;
    }
    int released = 0;
    for (Pipeline p : List.copyOf(pipelines.values())) {
      if (owner.equals(p.owner)) {
        try {
          remove(p, () -> { });
          released++;
        } catch (BackendException e) {
          throw runtime.failure(e);
        }
      }
    }
    LOG.log(System.Logger.Level.INFO, "released " + released + " pipelines of departed node " + owner);
  }

  // Forgets p now; its graph and steps are closed once every use queued so far is done, and {@code then} runs.
  private void remove(Pipeline p, Runnable then) throws BackendException {
    pipelines.remove(p.handle.id());
    if (p.owner != null) {
      owned.computeIfPresent(p.owner, (o, n) -> n == 1 ? null : n - 1);
    }
    // Every launch of its graph went on the pipeline stream, every step-by-step replay on the
    // steps' streams: events recorded now follow them all.
    List<GpuEvent> uses = new ArrayList<>();
    uses.add(runtime.device().record(stream));
    for (RecordedStep s : p.steps) {
      uses.add(runtime.device().record(s.stream()));
    }
    runtime.afterUses(uses, () -> {
      p.close(runtime.isPoisoned());
      then.run();
    });
  }

  private Pipeline resolve(PipelineHandle h) {
    if (h == null) {
      throw new CudaException(FailureCode.BAD_REQUEST, "pipeline is missing");
    }
    if (!runtime.node().equals(h.node()) || runtime.deviceIndex() != h.device()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "pipeline belongs to " + h.node() + "/" + h.device()
        + ", not to this device (" + runtime.node() + "/" + runtime.deviceIndex() + ")");
    }
    if (h.generation() != runtime.generation()) {
      throw new CudaException(FailureCode.STALE_HANDLE, "pipeline #" + h.id() + " was recorded by generation "
        + h.generation() + "; the device is at generation " + runtime.generation() + ": record it again");
    }
    Pipeline p = pipelines.get(h.id());
    if (p == null) {
      throw new CudaException(FailureCode.NOT_FOUND, "pipeline #" + h.id() + " does not exist or was released");
    }
    if (p.handle.tokenHigh() != h.tokenHigh() || p.handle.tokenLow() != h.tokenLow()) {
      throw new CudaException(FailureCode.FORBIDDEN, "pipeline #" + h.id() + ": the handle's token is not the "
        + "pipeline's (only the handle its recording answered, or a copy of it, replays or releases it)");
    }
    return p;
  }

  private void closeAll() {
    boolean poisoned = runtime.isPoisoned();
    pipelines.values().forEach(p -> p.close(poisoned));
    pipelines.clear();
    owned.clear();
  }
}
