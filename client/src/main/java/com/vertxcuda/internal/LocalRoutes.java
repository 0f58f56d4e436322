package com.vertxcuda.internal;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;

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
     * Whether this device's context and that of the device at {@code target} share a process and a
     * backend, so a copy between them goes straight from one to the other ({@link CopyOutRequest})
     * instead of staged through this JVM.
     */
    default boolean copiesDirectlyTo(String target) {
      return false;
    }

    /**
     * An empty buffer with room for {@code bytes} in the memory the device copies from and to
     * fastest (pinned on cuda, the shared region in process isolation): a transfer buffer the
     * device lends. Array transfers stage through these ({@link ChunkedTransfer}).
     *
     * @throws com.vertxcuda.CudaException when the device cannot lend one now (not ready; past
     *     what may be lent)
     */
    default Buffer allocateTransferBuffer(int bytes) {
      throw new CudaException(FailureCode.OUT_OF_MEMORY, "the device lends no transfer buffers");
    }

    /** Returns a transfer buffer, or a buffer a download lent, at once; false if it is not one. */
    default boolean releaseTransferBuffer(Buffer buffer) {
      return false;
    }

    /**
     * The most bytes the device may lend at once, transfer buffers and downloads together (its
     * transfer budget, and three quarters of the shared region in process isolation); a download
     * larger than this goes in pieces.
     */
    default long lendingLimit() {
      return Long.MAX_VALUE;
    }

    /**
     * Whether {@code buffer} is memory the device moves without a host copy of its own (pinned on
     * cuda, the shared region in process isolation): an upload from it is one request; from any
     * other memory a large one goes through the one pump ({@link ChunkedTransfer}).
     */
    default boolean lends(Buffer buffer) {
      return false;
    }

    /**
     * Host memory of {@code bytes} (its length) from the device's pool, for a download larger than
     * it may lend at once, filled by the pump; it goes back on {@link #releaseTransferBuffer} or
     * once unreachable. Null: none (a heap array is used), as when the device's transfer budget has
     * no room for it now.
     */
    default Buffer landing(int bytes) {
      return null;
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
