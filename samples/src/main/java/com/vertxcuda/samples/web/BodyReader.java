package com.vertxcuda.samples.web;

import com.vertxcuda.device.DeviceVerticle;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;

import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;

/**
 * Reads request bodies, each with an idle timeout and a whole-body timeout: a body that sends
 * nothing for {@code idleMs}, or that is not whole {@code totalMs} after it began (a sender that
 * trickles a byte now and then), fails with a {@link Failure} of 408, what it was read into given back. An octet-stream body of a
 * known length is read straight into the memory it will be uploaded from: a transfer buffer the
 * local device lends (pinned memory on cuda, its shared region in process isolation), so the upload
 * copies nothing more on the host; a heap buffer of that length when the device is elsewhere or
 * lends no more now. Runs on the request's event loop.
 */
final class BodyReader {

  /** The most a heap body is sized for up front from its Content-Length, which the client chose. */
  private static final int PRESIZE_LIMIT = 64 << 20;

  private BodyReader() {
  }

  /** Why a body was not read whole: the HTTP status that answers it, and a message that says why. */
  static final class Failure extends RuntimeException {
    final int status;

    Failure(int status, String message) {
      super(message, null, false, false);
      this.status = status;
    }
  }

  /**
   * The body, exactly {@code expected} bytes; a body of another length fails, once it is read (the
   * memory given back), with a 400 {@link Failure} whose message {@code wrongLength} makes of the
   * length received. The caller gives back the buffer of a success
   * ({@link DeviceVerticle#releaseTransferBuffer}).
   */
  static Future<Buffer> read(Vertx vertx, HttpServerRequest request, int expected, DeviceVerticle local, long idleMs,
                             long totalMs, LongFunction<String> wrongLength) {
    Buffer into = lend(expected, local);
    return new Read(vertx, request, into, expected, idleMs, totalMs).done.future().transform(read -> {
      if (read.succeeded() && read.result() == expected) {
        return Future.succeededFuture(into);
      }
      release(into, local);
      return Future.failedFuture(read.failed() ? read.cause() : new Failure(400, wrongLength.apply(read.result())));
    });
  }

  /** The body, in the heap; one over {@code limit} bytes fails, once it is read, with a 413 {@link Failure}. */
  static Future<Buffer> readUpTo(Vertx vertx, HttpServerRequest request, int limit, long idleMs, long totalMs) {
    long declared;
    try {
      declared = Long.parseLong(request.getHeader("content-length"));
    } catch (NumberFormatException e) {
      declared = 0;
    }
    Buffer into = Buffer.buffer((int) Math.max(0, Math.min(declared, Math.min(limit, PRESIZE_LIMIT))));
    return new Read(vertx, request, into, limit, idleMs, totalMs).done.future().compose(received -> received <= limit
      ? Future.succeededFuture(into)
      : Future.failedFuture(new Failure(413, "the body is over " + limit + " bytes")));
  }

  /** Reads and drops the rest of a body that will not be used. */
  static Future<Void> drain(Vertx vertx, HttpServerRequest request, long idleMs, long totalMs) {
    if (request.isEnded()) {
      return Future.succeededFuture();
    }
    return new Read(vertx, request, null, 0, idleMs, totalMs).done.future().mapEmpty();
  }

  /**
   * One body being read: its first {@code keep} bytes appended to {@code into} (none when null), all
   * counted; done with the count at the end, or failed at the request's failure, when nothing came
   * for {@code idleMs} or when the body is not whole {@code totalMs} after this began. Once done, it touches {@code into} no more (it may have been given back).
   */
  private static final class Read {

    final Promise<Long> done = Promise.promise();
    private final Vertx vertx;
    private final long idleNanos;
    private final long totalNanos;
    private final long began = System.nanoTime();
    private long received;
    private long lastByte = System.nanoTime();
    private long timer;

    Read(Vertx vertx, HttpServerRequest request, Buffer into, long keep, long idleMs, long totalMs) {
      this.vertx = vertx;
      this.idleNanos = TimeUnit.MILLISECONDS.toNanos(idleMs);
      this.totalNanos = TimeUnit.MILLISECONDS.toNanos(totalMs);
      request.handler(chunk -> {
        if (done.future().isComplete()) {
          return;
        }
        lastByte = System.nanoTime();
        long before = received;
        received += chunk.length();
        if (into != null && before < keep) {
          into.appendBuffer(received <= keep ? chunk : chunk.slice(0, (int) (keep - before)));
        }
      });
      request.exceptionHandler(done::tryFail);
      request.endHandler(v -> done.tryComplete(received));
      // One timer a body, moved on only when it fires, not at every chunk.
      timer = vertx.setTimer(Math.min(idleMs, totalMs), this::check);
      done.future().onComplete(x -> vertx.cancelTimer(timer));
      request.resume();
    }

    private void check(long id) {
      if (done.future().isComplete()) {
        return;
      }
      long now = System.nanoTime();
      long quiet = now - lastByte;
      long left = totalNanos - (now - began);
      if (quiet >= idleNanos) {
        done.tryFail(new Failure(408, "the request body sent nothing for " + TimeUnit.NANOSECONDS.toMillis(idleNanos)
          + " ms"));
      } else if (left <= 0) {
        done.tryFail(new Failure(408, "the request body was not whole " + TimeUnit.NANOSECONDS.toMillis(totalNanos)
          + " ms after it began (" + received + " bytes came)"));
      } else {
        long next = Math.min(idleNanos - quiet, left);
        timer = vertx.setTimer(Math.max(1, TimeUnit.NANOSECONDS.toMillis(next)), this::check);
      }
    }
  }

  private static Buffer lend(int bytes, DeviceVerticle local) {
    if (local != null) {
      try {
        return local.allocateTransferBuffer(bytes);
      } catch (RuntimeException lendsNoMore) {
        // not ready, or past what it may lend at once: the heap will do
      }
    }
    return Buffer.buffer(bytes);
  }

  private static void release(Buffer buffer, DeviceVerticle local) {
    if (local != null) {
      local.releaseTransferBuffer(buffer);
    }
  }
}
