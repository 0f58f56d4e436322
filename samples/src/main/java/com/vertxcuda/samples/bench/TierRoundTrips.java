package com.vertxcuda.samples.bench;

import com.vertxcuda.CudaException;
import com.vertxcuda.Library;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.impl.ContextTier;
import com.vertxcuda.device.impl.InFlight;
import com.vertxcuda.device.impl.InProcessContextTier;
import com.vertxcuda.device.isolation.ProcessContextTier;
import com.vertxcuda.device.spi.Request;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import org.HdrHistogram.Histogram;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * Requests submitted straight into a context tier's queue (no event bus, no device verticle), made in
 * this JVM and answered through callbacks: the hop below the device verticle.
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
   * Runs the requests {@code body} makes one after another, each submitted from the answer of the one
   * before (on the thread that answered it), and records the timed ones: from the submission to the answer.
   */
  static Histogram sequential(ContextTier tier, Plan plan, Library library, IntFunction<Object> body)
    throws Exception {
    Histogram hist = Histograms.create();
    CompletableFuture<Void> done = new CompletableFuture<>();
    next(tier, plan, library, body, hist, 0, done);
    done.get(10, TimeUnit.MINUTES);
    return hist;
  }

  private static void next(ContextTier tier, Plan plan, Library library, IntFunction<Object> body, Histogram hist,
                           int i, CompletableFuture<Void> done) {
    if (i == plan.total()) {
      done.complete(null);
      return;
    }
    long t0 = System.nanoTime();
    tier.submit(new DirectRequest(library, body.apply(i), reply -> {
      if (i >= plan.warmup()) {
        hist.recordValue(Math.max(1, System.nanoTime() - t0));
      }
      next(tier, plan, library, body, hist, i + 1, done);
    }, done::completeExceptionally));
  }

  /** A request made in this JVM, answered through callbacks. */
  private record DirectRequest(Library library, Object body, Consumer<Object> onReply,
                               Consumer<Throwable> onFailure) implements Request {
    @Override public long deadline() { return System.nanoTime() + TimeUnit.MINUTES.toNanos(1); }
    @Override public void reply(Object b) { onReply.accept(b); }
    @Override public void fail(CudaException e) { onFailure.accept(e); }
  }
}
