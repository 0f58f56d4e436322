package com.vertxcuda;

import com.vertxcuda.impl.TimedWork;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.util.List;
import java.util.function.Supplier;

/**
 * A result with where the time of the requests that made it went, for a caller who asks:
 *
 * <pre>
 * Timed.measure(vertx, () -&gt; gpu.upload(a, values).compose(x -&gt; blas.gemm(...)).compose(x -&gt; gpu.downloadFloats(c)))
 *   .onSuccess(t -&gt; t.requests().forEach(r -&gt; log(r.operation() + " GPU " + r.phases().getGpuNanos() + " ns")));
 * </pre>
 *
 * <p>{@link #measure} runs {@code work} on a context of its own (a duplicate of the caller's: the
 * same thread, its own local data); every request of a typed client made on that context — in
 * {@code work} and in the callbacks of the futures it chains, which complete there — asks the device
 * to measure it ({@link RequestPhases}: queue, stream wait, GPU or copy time, total) and send the
 * figures back with the answer, on the local route, over the event bus and across a device host's
 * link alike. A large transfer sent in chunks is one entry per chunk; a remote transfer over the
 * bulk side channel is not timed. Requests made elsewhere, or after the work's future completed, are
 * not recorded. Other callers pay nothing for it.
 *
 * @param <T> the work's result
 */
public interface Timed<T> {

  /** What the work's future completed with. */
  T result();

  /** Each request the work made, in the order their answers came. */
  List<RequestTiming> requests();

  /** The sum of one phase over the requests that measured it, in ns (e.g. {@code RequestPhases::getGpuNanos}). */
  default long sum(java.util.function.ToLongFunction<RequestPhases> phase) {
    long sum = 0;
    for (RequestTiming r : requests()) {
      if (r.phases() != null) {
        long v = phase.applyAsLong(r.phases());
        if (v > 0) {
          sum += v;
        }
      }
    }
    return sum;
  }

  /**
   * Runs {@code work} and times each request it makes, as the class comment says. The future
   * completes on the caller's context, never on its stack, with the work's result or failure (a
   * failure carries no timings).
   */
  static <T> Future<Timed<T>> measure(Vertx vertx, Supplier<Future<T>> work) {
    return TimedWork.measure(vertx, work);
  }
}
