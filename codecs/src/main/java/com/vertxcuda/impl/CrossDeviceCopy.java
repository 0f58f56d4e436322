package com.vertxcuda.impl;

import com.vertxcuda.Addresses;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.message.DownloadReply;
import com.vertxcuda.message.DownloadRequest;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

import java.security.SecureRandom;

/**
 * A copy between two devices (of one node or of two), staged through host memory in views of at most
 * the client's {@code maxMessageSize}, as many in flight as a transfer to another node has
 * ({@link ChunkedTransfer#WINDOW}).
 *
 * <p>Where both devices' contexts share a process ({@link LocalRoutes.Route#copiesDirectlyTo}), the
 * source's context copies straight into the target instead ({@link CopyOutRequest}: peer to peer on
 * cuda), ordered the same way.
 *
 * <p>Ordered on both devices like any request made on the caller's context (or thread). On the
 * target: a {@link CopyInRequest} goes first and takes the copy's place there, so requests made
 * later that touch the target wait until the last {@link CopyInChunk} has been written. On the
 * source: the reads are {@link DownloadRequest}s sent from here, so they follow what was sent to
 * the source before. The copy keeps its place in the caller's order ({@link CallerOrder.Hold})
 * until its last read is sent, so a request made after it on the same context (or thread) waits
 * until then (the source's stream ordering then keeps a later write behind the reads).
 */
final class CrossDeviceCopy implements CallerOrder.Hold {


  private static final SecureRandom RANDOM = new SecureRandom();

  private final RequestSender from;
  private final RequestSender to;
  private final BufferHandle source;
  private final BufferHandle target;
  private final long transfer;
  private final long perChunk;
  private final long chunks;
  private final Promise<BufferHandle> done = Promise.promise();
  private final Context caller;
  private final CallerOrder order = CallerOrder.current();
  private long next;
  private boolean failed;
  /** Whether the copy still keeps its place in the caller's order (until its last read is sent). */
  private boolean holding = true;

  private CrossDeviceCopy(Vertx vertx, BufferHandle source, BufferHandle target, long timeoutMillis, int chunkBytes) {
    this.from = new RequestSender(vertx, Addresses.device(source.node(), source.device()), timeoutMillis);
    this.to = new RequestSender(vertx, Addresses.device(target.node(), target.device()), timeoutMillis);
    this.source = source;
    this.target = target;
    long id;
    do {
      id = RANDOM.nextLong();
    } while (id == 0);
    this.transfer = id;
    this.perChunk = Math.max(1, chunkBytes / source.dtype().size());
    this.chunks = (source.length() + perChunk - 1) / perChunk;
    this.caller = from.callerContext();
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
    return new CrossDeviceCopy(vertx, source, target, timeoutMillis, chunkBytes).start();
  }

  private Future<BufferHandle> start() {
    // Sent from the caller's context when its turn comes (its messages may go over the event bus).
    order.hold(caller, false, this);
    return done.future();
  }

  /** Everything made before the copy on its caller has been sent: the copy's requests go now. */
  @Override
  public void turn() {
    synchronized (this) {
      LocalRoutes.Route route = from.localRoute();
      boolean direct = chunks > 0 && route != null && route.copiesDirectlyTo(to.address());
      // The target's place first: anything sent to the target after this call waits for the copy.
      to.<BufferHandle>dispatch(new CopyInRequest(source, target, transfer, direct), caller).onComplete(ar -> {
        if (ar.succeeded()) {
          done.tryComplete(target);
        } else {
          fail(ar.cause(), false);
        }
      });
      if (direct) {
        // Both contexts share a process: the source's copies into the target itself, in its order.
        from.<BufferHandle>dispatch(new CopyOutRequest(source, target, transfer), caller).onFailure(t -> fail(t, true));
        next = chunks;
      }
      while (next < chunks && next < ChunkedTransfer.WINDOW && !failed) {
        sendNext();
      }
    }
    releaseIfSent();
  }

  // Under the lock, so reads leave in order whichever thread sends them.
  private void sendNext() {
    long at = next++ * perChunk;
    long length = Math.min(perChunk, source.length() - at);
    BufferHandle read = chunks == 1 ? source : source.view(at, length);
    BufferHandle write = chunks == 1 ? target : target.view(at, length);
    DownloadRequest body = new DownloadRequest(read);
    Future<DownloadReply> reply = from.dispatch(body, caller);
    reply.onComplete(ar -> {
      if (ar.failed()) {
        fail(ar.cause(), true);
        return;
      }
      Buffer data = ar.result().getData();
      synchronized (this) {
        if (failed) {
          giveBack(data);
          return;
        }
      }
      // Outside the order: the copy holds the target's place.
      to.<BufferHandle>dispatch(new CopyInChunk(write, transfer, data), caller).onComplete(written -> {
        if (written.succeeded()) {
          // The target has copied the bytes: the source's lent memory goes back. (After a failure it
          // is left to the collector: a timed-out chunk may still be read by the target.)
          giveBack(data);
          succeeded();
        } else {
          fail(written.cause(), true);
        }
      });
    });
  }

  /** A download from a device in this JVM lends its memory (pinned, or a shared-region slot): returned at once. */
  private void giveBack(Buffer data) {
    LocalRoutes.Route route = from.localRoute();
    if (route != null && data != null) {
      route.releaseTransferBuffer(data);
    }
  }

  private void succeeded() {
    synchronized (this) {
      if (failed) {
        return;
      }
      if (next < chunks) {
        sendNext();
      }
    }
    releaseIfSent();
  }

  /** Fails the copy with {@code cause}; {@code abort}: the target still holds its place, give it up. */
  private void fail(Throwable cause, boolean abort) {
    synchronized (this) {
      if (failed) {
        return;
      }
      failed = true;
    }
    releaseIfSent();
    done.tryFail(cause);
    if (abort) {
      to.dispatch(new CopyInChunk(target, transfer, null), caller);
    }
  }

  // Outside the lock: once the last read is sent (or the copy failed), what waits behind it goes.
  private void releaseIfSent() {
    synchronized (this) {
      if (!holding || next < chunks && !failed) {
        return;
      }
      holding = false;
    }
    order.release(this);
  }
}
