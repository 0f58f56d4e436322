package com.vertxcuda.internal;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.AsyncMap;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * The one way the toolkit uses the cluster manager's shared maps (the device registry, the
 * cluster's policy): every operation is bounded. A cluster manager that does not answer (a member
 * that cannot reach the others, a map partition that never migrates) fails it with TIMEOUT after
 * {@link #ANSWER_MILLIS}, so a listing, a device's start or stop and a policy read each end with
 * one answer instead of waiting for ever.
 */
public final class ClusterMaps {

  /** The longest one operation on a cluster map may take, in ms. */
  public static final long ANSWER_MILLIS = 10_000;

  private ClusterMaps() {
  }

  /**
   * {@code operation} on the cluster map {@code name} (got, then used), failed with TIMEOUT when the
   * cluster manager has not answered both within {@link #ANSWER_MILLIS}.
   */
  public static <K, V, T> Future<T> call(Vertx vertx, String name, Function<AsyncMap<K, V>, Future<T>> operation) {
    return vertx.sharedData().<K, V>getAsyncMap(name).compose(operation)
      .timeout(ANSWER_MILLIS, TimeUnit.MILLISECONDS)
      .recover(t -> Future.failedFuture(t instanceof TimeoutException
        ? new CudaException(FailureCode.TIMEOUT, "the cluster manager did not answer for map " + name + " within "
          + ANSWER_MILLIS + " ms")
        : t));
  }

  /** Whether {@code t} is the failure {@link #call} gives when the cluster manager did not answer. */
  public static boolean unanswered(Throwable t) {
    return t instanceof CudaException && ((CudaException) t).code() == FailureCode.TIMEOUT;
  }
}
