package com.vertxcuda.impl;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.Failures;
import com.vertxcuda.message.DownloadReply;
import com.vertxcuda.message.DownloadRequest;
import com.vertxcuda.message.UploadRequest;
import io.netty.buffer.Unpooled;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.buffer.BufferInternal;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * Moves {@link HostElements} to or from a buffer in views of at most the client's
 * {@code maxMessageSize} bytes (8 MiB by default), at most
 * {@link #WINDOW} of them in flight: a large array is never copied whole into one more host buffer,
 * its copy on this side overlaps the device's work on the views already sent, and what it holds of
 * the device's transfer memory (a device host's shared region) stays bounded.
 *
 * <p>It keeps the place of the call that made it: the first view is sent as any request is, and
 * until the last is sent the transfer is {@link RequestSender.Held held}, so a request made after it
 * on the same context (or thread) first makes it send all the rest. Order then holds as for any
 * request; the window only bounds a transfer nobody is waiting behind.
 *
 * <p>Heap memory, on purpose: in-process the device stages a large heap upload into its fastest
 * memory (pinned on cuda) on a preparation thread, off the submission thread, and a device host
 * copies it into its shared region either way. An upload's staging arrays are reused once their
 * view has succeeded (the device has read them by then), never after a failure.
 */
final class ChunkedTransfer implements RequestSender.Held {

  /** Views in flight at once. */
  static final int WINDOW = 4;

  private final RequestSender sender;
  private final BufferHandle handle;
  private final HostElements host;
  private final boolean upload;
  private final int per;
  private final long perChunk;
  private final long chunks;
  private final Promise<Void> done = Promise.promise();
  private final ArrayDeque<byte[]> staging = new ArrayDeque<>(WINDOW);
  private long next;
  private long completed;
  private boolean failed;
  /** The holders the transfer is held among while it has views left to send; null otherwise. */
  private Object holders;

  private ChunkedTransfer(RequestSender sender, BufferHandle handle, HostElements host, boolean upload, int chunkBytes) {
    this.sender = sender;
    this.handle = handle;
    this.host = host;
    this.upload = upload;
    this.per = host.perDeviceElement(handle.dtype());
    this.perChunk = Math.max(1, chunkBytes / handle.dtype().size());
    this.chunks = Math.max(1, (handle.length() + perChunk - 1) / perChunk);
  }

  /** Writes {@code host}, which must fit {@code target}, into it, in views of at most {@code chunkBytes}. */
  static Future<Void> upload(RequestSender sender, BufferHandle target, HostElements host, int chunkBytes) {
    host.checkFits(target);
    return new ChunkedTransfer(sender, target, host, true, chunkBytes).start();
  }

  /** Reads {@code source} into {@code host}, which must fit it, in views of at most {@code chunkBytes}. */
  static Future<Void> download(RequestSender sender, BufferHandle source, HostElements host, int chunkBytes) {
    host.checkFits(source);
    return new ChunkedTransfer(sender, source, host, false, chunkBytes).start();
  }

  private synchronized Future<Void> start() {
    // Through request(): whatever other clients hold on this context was made earlier, and goes first.
    sendNext(true);
    if (next < chunks && !failed) {
      // Held before the rest of the window leaves, so a view that succeeds at once sends the next.
      RequestSender.hold(this);
      holders = RequestSender.holdersKey();
    }
    while (next < chunks && next < WINDOW && !failed) {
      sendNext(false);
    }
    if (next == chunks) {
      release();
    }
    return done.future();
  }

  /** A request is being made after this transfer on its context: the rest goes now, first. */
  @Override
  public synchronized void sendHeld() {
    holders = null; // the sender has let go of this holder
    while (next < chunks && !failed) {
      sendNext(false);
    }
  }

  // Under the lock, so views and the rest of a flush leave in order whichever thread sends them.
  private void sendNext(boolean first) {
    long k = next++;
    long from = k * perChunk;
    BufferHandle view = chunks == 1 ? handle : handle.view(from, Math.min(perChunk, handle.length() - from));
    int values = Math.toIntExact(view.length() * per);
    if (!upload) {
      Object body = new DownloadRequest(view);
      Future<DownloadReply> reply = first ? sender.request(body) : sender.dispatch(body);
      reply.onComplete(ar -> {
        if (ar.succeeded()) {
          // A failed copy (a reply of the wrong size) fails the transfer like a failed view.
          try {
            ByteBuffer le = ((BufferInternal) ar.result().getData()).getByteBuf().nioBuffer();
            host.read(le, from * per, values);
          } catch (RuntimeException e) {
            failed(Failures.toCudaException(e));
            return;
          }
          succeeded(null);
        } else {
          failed(ar.cause());
        }
      });
      return;
    }
    int bytes = Math.toIntExact(view.byteLength());
    byte[] memory = staging.isEmpty() || staging.peek().length < bytes ? new byte[bytes] : staging.poll();
    host.write(from * per, values, ByteBuffer.wrap(memory, 0, bytes));
    Object body = new UploadRequest(view, BufferInternal.buffer(Unpooled.wrappedBuffer(memory, 0, bytes)));
    Future<BufferHandle> reply = first ? sender.request(body) : sender.dispatch(body);
    reply.onComplete(ar -> {
      if (ar.succeeded()) {
        succeeded(memory);
      } else {
        failed(ar.cause());
      }
    });
  }

  /** One view is done; {@code memory}, an upload's staging, may be used again. */
  private void succeeded(byte[] memory) {
    boolean finished;
    synchronized (this) {
      if (failed) {
        return;
      }
      if (memory != null) {
        staging.push(memory);
      }
      if (next < chunks && holders != null) {
        sendNext(false);
      }
      if (next == chunks) {
        release();
      }
      finished = ++completed == chunks;
    }
    if (finished) {
      done.tryComplete();
    }
  }

  private void failed(Throwable cause) {
    synchronized (this) {
      if (failed) {
        return;
      }
      failed = true;
      release();
    }
    done.tryFail(cause);
  }

  private void release() {
    if (holders != null) {
      RequestSender.released(holders, this);
      holders = null;
    }
  }
}
