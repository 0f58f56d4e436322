package com.vertxcuda;

import io.vertx.codegen.annotations.VertxGen;
import io.vertx.core.Future;

/**
 * Buffers whose lifetime is one piece of work (in the manner of DJL's {@code NDManager}): what is
 * allocated through a scope is freed when the scope closes, however the work ended, so a handler
 * that allocates and then fails leaks nothing. Get one from {@link DeviceClient#scope()}, or let
 * {@link DeviceClient#withScope} open and close one around a future.
 *
 * <pre>
 * Future&lt;float[]&gt; doubled = gpu.withScope(scope -&gt; scope.alloc(DType.F32, n)
 *   .compose(x -&gt; gpu.upload(x, values))
 *   .compose(x -&gt; scope.alloc(DType.F32, n).compose(y -&gt; kernels.scale(x, 2.0, y)))
 *   .compose(y -&gt; gpu.downloadFloats(y)));         // then x and y are freed, even on failure
 * </pre>
 *
 * <p>A buffer that must outlive the scope is {@link #detach detached} from it.
 *
 * <p>Closing frees each buffer once: one already freed (through the client, say) or from an earlier
 * generation is passed over. Work still running on a buffer is not cut short: the device returns
 * a freed buffer's memory after every use already sent has completed. Thread-safe.
 */
@VertxGen
public interface DeviceScope {

  /**
   * Allocates {@code count} elements of {@code dtype} and records the buffer in this scope. On a
   * closed scope it fails with BAD_REQUEST; an allocation still on its way when the scope closes
   * is freed when it arrives, and its future fails with BAD_REQUEST.
   */
  Future<BufferHandle> alloc(DType dtype, long count);

  /**
   * Records a buffer allocated elsewhere (or a view's buffer) in this scope, to be freed with it;
   * returns {@code buffer}. On a closed scope the buffer is not recorded and this throws
   * {@link CudaException} BAD_REQUEST.
   */
  BufferHandle attach(BufferHandle buffer);

  /**
   * Takes a buffer (a view's buffer) out of this scope, so that closing it leaves the buffer alone;
   * returns {@code buffer}. Freeing it is then the caller's business.
   */
  BufferHandle detach(BufferHandle buffer);

  /** How many buffers the scope would free if it closed now, allocations on their way included. */
  int size();

  /**
   * Frees every buffer still in the scope, once the allocations on their way have arrived. Frees
   * that find the buffer already freed (NOT_FOUND) or from an earlier generation (STALE_HANDLE) are
   * passed over; any other failure fails the returned future once every free has been tried.
   * Closing again returns the first close's future.
   */
  Future<Void> close();
}
