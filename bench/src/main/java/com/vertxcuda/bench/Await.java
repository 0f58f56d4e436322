package com.vertxcuda.bench;

import io.vertx.core.Future;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/** Waits for a future from the benchmark's own thread. */
final class Await {

  private Await() {
  }

  static <T> T await(Future<T> f) throws Exception {
    try {
      return f.toCompletionStage().toCompletableFuture().get(10, TimeUnit.MINUTES);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
    }
  }
}
