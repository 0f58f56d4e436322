package com.vertxcuda.impl;

import com.vertxcuda.internal.CallerOrder;
import com.vertxcuda.internal.ChunkedTransfer;
import com.vertxcuda.internal.CopyInAbort;
import com.vertxcuda.internal.CopyInRequest;
import com.vertxcuda.internal.CopyOutRequest;
import com.vertxcuda.internal.LocalRoutes;
import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.Addresses;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import io.vertx.core.Future;
import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

import java.security.SecureRandom;

/**
 * A copy between two devices (of one node or of two). Staged through this JVM, it is the one pump's
 * ({@link ChunkedTransfer#copy}: reads of the source's views, writes of the target's views, in its
 * window, keeping the caller's place until its last write has left).
 *
 * <p>Where both devices' contexts share a process ({@link LocalRoutes.Route#copiesDirectlyTo}), the
 * source's context copies straight into the target instead (peer to peer on cuda): a
 * {@link CopyInRequest} takes the copy's place on the target (later requests that touch the target
 * wait until the source has written it), then a {@link CopyOutRequest} goes to the source, in the
 * caller's order like any request; if the source refuses it, a {@link CopyInAbort} gives the
 * target's place up at once instead of at the copy's deadline.
 */
final class CrossDeviceCopy implements CallerOrder.Hold {

  private static final SecureRandom RANDOM = new SecureRandom();

  private final RequestSender from;
  private final RequestSender to;
  private final BufferHandle source;
  private final BufferHandle target;
  private final long transfer;
  private final Promise<BufferHandle> done = Promise.promise();
  private final Context caller;
  private final CallerOrder order;

  private CrossDeviceCopy(RequestSender from, RequestSender to, BufferHandle source, BufferHandle target) {
    this.from = from;
    this.to = to;
    this.source = source;
    this.target = target;
    long id;
    do {
      id = RANDOM.nextLong();
    } while (id == 0);
    this.transfer = id;
    this.caller = from.callerContext();
    this.order = from.order();
  }

  /** Whether {@code source} and {@code target} are on different devices. */
  static boolean crosses(BufferHandle source, BufferHandle target) {
    return source != null && target != null
      && (source.device() != target.device() || !source.node().equals(target.node()));
  }

  /** Copies {@code source} into {@code target}, on another device; same dtype and length. */
  static Future<BufferHandle> copy(Vertx vertx, BufferHandle source, BufferHandle target, long timeoutMillis,
                                   int chunkBytes) {
    if (source.dtype() != target.dtype() || source.length() != target.length()) {
      return RequestSender.failLater(vertx.getOrCreateContext(), new CudaException(FailureCode.BAD_REQUEST, "source is " + source.length() + " "
        + source.dtype() + " but target is " + target.length() + " " + target.dtype()));
    }
    RequestSender from = new RequestSender(vertx, Addresses.device(source.node(), source.device()), timeoutMillis);
    RequestSender to = new RequestSender(vertx, Addresses.device(target.node(), target.device()), timeoutMillis);
    LocalRoutes.Route route = from.localRoute();
    if (source.length() > 0 && route != null && route.copiesDirectlyTo(to.address())) {
      return new CrossDeviceCopy(from, to, source, target).start();
    }
    return ChunkedTransfer.copy(from, to, source, target, chunkBytes).map(target);
  }

  private Future<BufferHandle> start() {
    order.hold(caller, false, this);
    return done.future();
  }

  /** Everything made before the copy on its caller has been sent: the target's place, then the source's copy. */
  @Override
  public void turn() {
    to.<BufferHandle>dispatch(new CopyInRequest(source, target, transfer), caller, order).onComplete(ar -> {
      if (ar.succeeded()) {
        done.tryComplete(target);
      } else {
        done.tryFail(ar.cause());
      }
    });
    from.<BufferHandle>dispatch(new CopyOutRequest(source, target, transfer), caller, order).onFailure(t -> {
      // The target still holds its place for a copy that will not come: given up first, so that a
      // handler of the copy's failure that throws cannot keep it held.
      to.dispatch(new CopyInAbort(target, transfer), caller, order);
      done.tryFail(t);
    });
    order.release(this);
  }
}
