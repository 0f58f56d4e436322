package com.vertxcuda.internal;

import io.vertx.core.Context;
import io.vertx.core.Future;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Devices served in this JVM by the same Vert.x instance, by address: how a typed client reaches a
 * local device without an event-bus hop (the request goes from the caller's thread straight into
 * the device's admission and its context's queue; the answer comes back on the caller's context).
 * Every typed client sends through {@link RequestSender}, which takes this route when it exists, so
 * requests made on one context keep their order whichever clients made them. One per Vert.x, held by
 * its {@link CudaRuntime}; any thread.
 */
public final class LocalRoutes {

  /** What a device offers its local callers. */
  public interface Route {
    /**
     * Admits {@code body} for the device's address or one of its libraries' ({@code address}),
     * with the caller's timeout; any thread. The future completes on {@code caller} (the caller's
     * context) in a task of its own, never on this stack, failed with a
     * {@link com.vertxcuda.CudaException}.
     */
    <T> Future<T> request(String address, Object body, long timeoutMillis, Context caller);

    /**
     * {@link #request} of a traced request: {@code trace} carries the client span's headers to the
     * device, which reports its own span under it and hands back where the request's time went.
     */
    default <T> Future<T> request(String address, Object body, long timeoutMillis, Context caller, RequestTrace trace) {
      return request(address, body, timeoutMillis, caller);
    }

    /**
     * Whether this device's context and that of the device at {@code target} share a process and a
     * backend, so a copy between them goes straight from one to the other ({@link CopyOutRequest})
     * instead of staged through this JVM.
     */
    default boolean copiesDirectlyTo(String target) {
      return false;
    }

    /**
     * The host memory the device lends its local callers for transfers (transfer buffers, landings
     * of large downloads), charged to its transfer budget; by default none.
     */
    default TransferMemory transferMemory() {
      return TransferMemory.NONE;
    }
  }

  private final Map<String, Route> routes = new ConcurrentHashMap<>();

  LocalRoutes() {
  }

  /** {@code route} serves {@code address} from now on. */
  public void register(String address, Route route) {
    routes.put(address, route);
  }

  /** {@code route} serves {@code address} no more (nothing changes where another route serves it now). */
  public void unregister(String address, Route route) {
    routes.remove(address, route);
  }

  /** The route that serves {@code address}, or null where no device of this Vert.x does. */
  public Route get(String address) {
    return routes.get(address);
  }
}
