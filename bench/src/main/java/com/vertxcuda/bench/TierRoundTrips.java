package com.vertxcuda.bench;

import com.vertxcuda.CudaException;
import com.vertxcuda.Library;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.context.ContextTier;
import com.vertxcuda.device.context.InFlight;
import com.vertxcuda.device.context.InProcessContextTier;
import com.vertxcuda.device.isolation.ProcessContextTier;
import com.vertxcuda.device.spi.Request;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.concurrent.TimeoutException;
import org.HdrHistogram.Histogram;

import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * Requests submitted straight into a context tier's queue (no event bus, no device verticle), made in
 * this JVM, each answered to the thread that made it: the hop below the device verticle.
 */
final class TierRoundTrips {

  private TierRoundTrips() {
  }

  /** A context tier of the bench's own, the path its rows are recorded under, and how it is made. */
  enum Tier {
    /** In this JVM (the context tier in-process). */
    IN_PROCESS("vertx.tier"),
    /**
     * Over the link to a device host of its own, answered on the link's reader thread: no event bus,
     * no device verticle, no event loop, so the report splits process isolation's extra into the
     * link's hops and the caller's.
     */
    PROCESS("vertx.process-tier");

    final String path;

    Tier(String path) {
      this.path = path;
    }

    Future<ContextTier> launch(Vertx vertx, DeviceOptions options) {
      return this == IN_PROCESS
        ? InProcessContextTier.launch(vertx, options, "bench", 1, reason -> { })
        : ProcessContextTier.launch(vertx, options, "bench", 1, new InFlight(), reason -> { });
    }
  }

  /** One request for {@code library} (null: the device's own) and its answer. */
  static Future<Object> direct(ContextTier tier, Library library, Object body) {
    Promise<Object> p = Promise.promise();
    tier.submit(new DirectRequest(library, body, p::tryComplete, p::tryFail));
    return p.future();
  }

  /**
   * Runs the requests {@code body} makes one after another from this thread, each made once the one
   * before is answered, and records the timed ones: from the submission to the answer seen here. The
   * answer is handed from the thread that gives it (the completion thread in-process, the link's reader
   * in process isolation) to this one, which waits for it spinning, as the "context alone" row's
   * caller waits for its completion and a polling event loop for its answer. The next request is not
   * submitted on the answering thread itself: that would keep the completion thread from its polling
   * and add more to this row than the typed client's whole path in-process.
   */
  static Histogram sequential(ContextTier tier, Plan plan, Library library, IntFunction<Object> body)
    throws Exception {
    Histogram hist = Histograms.create();
    long limit = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
    for (int i = 0; i < plan.total(); i++) {
      Answer answer = new Answer();
      long t0 = System.nanoTime();
      tier.submit(new DirectRequest(library, body.apply(i), answer::succeed, answer::fail));
      while (!answer.done) {
        Thread.onSpinWait();
        if (System.nanoTime() - limit > 0) {
          throw new TimeoutException("no answer to request " + i + " within 10 minutes");
        }
      }
      long t = System.nanoTime() - t0;
      if (answer.failure != null) {
        throw answer.failure;
      }
      if (i >= plan.warmup()) {
        hist.recordValue(Math.max(1, t));
      }
    }
    return hist;
  }

  /** One request's answer, handed to the thread that waits for it. */
  private static final class Answer {
    volatile boolean done;
    Exception failure;

    void succeed(Object body) {
      done = true;
    }

    void fail(Throwable e) {
      failure = e instanceof Exception ? (Exception) e : new RuntimeException(e);
      done = true;
    }
  }

  /** A request made in this JVM, answered through callbacks. */
  private record DirectRequest(Library library, Object body, Consumer<Object> onReply,
                               Consumer<Throwable> onFailure) implements Request {
    @Override public long deadline() { return System.nanoTime() + TimeUnit.MINUTES.toNanos(1); }
    @Override public void reply(Object b) { onReply.accept(b); }
    @Override public void fail(CudaException e) { onFailure.accept(e); }
  }
}
