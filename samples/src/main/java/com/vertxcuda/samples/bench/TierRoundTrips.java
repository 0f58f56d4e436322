package com.vertxcuda.samples.bench;

import com.vertxcuda.CudaException;
import com.vertxcuda.Library;
import com.vertxcuda.device.impl.ContextTier;
import com.vertxcuda.device.spi.Request;
import io.vertx.core.Future;
import io.vertx.core.Promise;
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
