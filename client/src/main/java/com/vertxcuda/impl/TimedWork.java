package com.vertxcuda.impl;

import com.vertxcuda.Failures;
import com.vertxcuda.RequestTiming;
import com.vertxcuda.Timed;
import com.vertxcuda.internal.TimingScope;
import com.vertxcuda.internal.VertxInternals;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

import java.util.List;
import java.util.function.Supplier;

/** {@link Timed#measure}: the work runs in a task on a timed context; the result completes on the caller's. */
public final class TimedWork {

  private TimedWork() {
  }

  public static <T> Future<Timed<T>> measure(Vertx vertx, Supplier<Future<T>> work) {
    Context caller = vertx.getOrCreateContext();
    Promise<Timed<T>> done = VertxInternals.promise(caller);
    TimingScope scope = new TimingScope();
    Context timed = scope.open(caller);
    timed.runOnContext(v -> {
      Future<T> f;
      try {
        f = work.get();
        if (f == null) {
          f = Future.failedFuture(new NullPointerException("the timed work returned no future"));
        }
      } catch (RuntimeException | Error e) {
        f = Future.failedFuture(e);
      }
      f.onComplete(ar -> {
        List<RequestTiming> requests = scope.close();
        if (ar.failed()) {
          done.fail(Failures.toCudaException(ar.cause()));
        } else {
          done.complete(new Result<>(ar.result(), requests));
        }
      });
    });
    return done.future();
  }

  private record Result<T>(T result, List<RequestTiming> requests) implements Timed<T> {
  }
}
