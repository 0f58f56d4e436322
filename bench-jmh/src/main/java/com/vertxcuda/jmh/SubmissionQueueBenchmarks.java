package com.vertxcuda.jmh;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.device.context.SubmissionLoop;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.device.spi.RequestHandler;
import com.vertxcuda.device.spi.RequestType;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The context's submission queue without a device: requests handed to the submission thread, each
 * answered there at once. {@code oneByOne}: the hand-off both ways, a request at a time; {@code burst}:
 * 64 queued together, per burst.
 */
@State(Scope.Benchmark)
public class SubmissionQueueBenchmarks {

  /** How long the submission thread spins when its queue runs dry before it parks, in µs. */
  @Param({"0", "50"})
  public int spinMicros;

  private SubmissionLoop loop;
  private final AtomicInteger answered = new AtomicInteger();

  @Setup(Level.Trial)
  public void setup() {
    loop = new SubmissionLoop("jmh-submission", spinMicros * 1000L, () -> { });
    loop.device(new Answering());
    loop.start();
  }

  @TearDown(Level.Trial)
  public void close() throws Exception {
    loop.close(new CudaException(FailureCode.CONTEXT_LOST, "benchmark over"), () -> { })
      .get(10, TimeUnit.SECONDS);
  }

  @Benchmark
  public int oneByOne() {
    int before = answered.get();
    loop.submit(new Answered(answered));
    while (answered.get() == before) {
      Thread.onSpinWait();
    }
    return before;
  }

  @Benchmark
  public int burst() {
    int until = answered.get() + 64;
    for (int i = 0; i < 64; i++) {
      loop.submit(new Answered(answered));
    }
    while (answered.get() < until) {
      Thread.onSpinWait();
    }
    return until;
  }

  /** Answers each request at once, on the submission thread. */
  private static final class Answering implements RequestHandler {
    private static final RequestType<Answering, Answered> ANSWERED = RequestType.of(Answering.class, Answered.class)
      .handler((h, r, body, prepared) -> {
        r.reply(body);
        return null;
      }).build();

    @Override
    public List<RequestType<?, ?>> types() {
      return List.of(ANSWERED);
    }
  }

  /** A request that counts its answer. */
  private record Answered(AtomicInteger answered) implements Request {
    @Override public Library library() { return null; }
    @Override public Object body() { return this; }
    @Override public RequestType<?, ?> type() { return Answering.ANSWERED; }
    @Override public long deadline() { return System.nanoTime() + 60_000_000_000L; }
    @Override public void reply(Object body) { answered.incrementAndGet(); }
    @Override public void fail(CudaException failure) { answered.incrementAndGet(); }
  }
}
