package com.vertxcuda.bench;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

import java.util.function.IntFunction;

import static com.vertxcuda.bench.result.Series.round;

/**
 * Latency distributions (HdrHistogram, nanoseconds, three significant digits): the two ways a
 * benchmark runs its requests one after another, and the form a point keeps them in.
 */
final class Histograms {

  /** A request made on this thread, returning when it is done. */
  interface Op {
    void run(int i) throws Exception;
  }

  private Histograms() {
  }

  static Histogram create() {
    return new Histogram(3);
  }

  /** Runs {@code op} {@link Plan#total()} times on this thread; records the timed runs (the last {@link Plan#runs()}). */
  static Histogram loop(Plan plan, Op op) throws Exception {
    Histogram h = create();
    for (int i = 0; i < plan.total(); i++) {
      long t0 = System.nanoTime();
      op.run(i);
      long t = System.nanoTime() - t0;
      if (i >= plan.warmup()) {
        h.recordValue(Math.max(1, t));
      }
    }
    return h;
  }

  /**
   * Runs the requests one after another on one event loop, each made when the one before has
   * completed (as a Vert.x handler would chain them), and records the timed ones: from the call to
   * its completion on that event loop.
   */
  static Histogram sequential(Vertx vertx, Plan plan, IntFunction<Future<?>> request) throws Exception {
    Histogram h = create();
    Promise<Void> done = Promise.promise();
    Context context = vertx.getOrCreateContext();
    context.runOnContext(v -> next(context, plan, request, h, 0, done));
    Await.await(done.future());
    return h;
  }

  private static void next(Context context, Plan plan, IntFunction<Future<?>> request, Histogram h, int i,
                           Promise<Void> done) {
    if (i == plan.total()) {
      done.complete();
      return;
    }
    long t0 = System.nanoTime();
    Future<?> f;
    try {
      f = request.apply(i);
    } catch (RuntimeException e) {
      done.fail(e);
      return;
    }
    boolean inline = f.isComplete();
    f.onComplete(ar -> {
      long t = System.nanoTime() - t0;
      if (ar.failed()) {
        done.fail(ar.cause());
        return;
      }
      if (i >= plan.warmup()) {
        h.recordValue(Math.max(1, t));
      }
      if (inline) {
        // Completed before it was returned: go on from the event loop, not deeper into this stack.
        context.runOnContext(v -> next(context, plan, request, h, i + 1, done));
      } else {
        next(context, plan, request, h, i + 1, done);
      }
    });
  }

  /** The median, in nanoseconds. */
  static double p50(Histogram h) {
    return h.getValueAtPercentile(50);
  }

  /**
   * A point's {@code latency} object in {@code unit} (us or ms): percentiles, mean, extremes and,
   * with {@code cdf}, the distribution as [value, fraction at or below] pairs.
   */
  static JsonObject latency(Histogram h, String unit, boolean cdf) {
    double scale = unit.equals("ms") ? 1e6 : 1e3;
    JsonObject l = new JsonObject().put("unit", unit)
      .put("p50", round(h.getValueAtPercentile(50) / scale))
      .put("p90", round(h.getValueAtPercentile(90) / scale))
      .put("p99", round(h.getValueAtPercentile(99) / scale))
      .put("p999", round(h.getValueAtPercentile(99.9) / scale))
      .put("mean", round(h.getMean() / scale))
      .put("min", round(h.getMinValue() / scale))
      .put("max", round(h.getMaxValue() / scale));
    if (cdf) {
      JsonArray pairs = new JsonArray();
      for (HistogramIterationValue v : h.percentiles(2)) {
        pairs.add(new JsonArray().add(round(h.highestEquivalentValue(v.getValueIteratedTo()) / scale))
          .add(Math.min(1.0, round(v.getPercentileLevelIteratedTo() / 100))));
      }
      l.put("cdf", pairs);
    }
    return l;
  }
}
