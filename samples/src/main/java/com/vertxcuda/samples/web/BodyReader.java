package com.vertxcuda.samples.web;

import com.vertxcuda.device.DeviceVerticle;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;

import java.util.function.LongFunction;

/**
 * Reads an octet-stream body of a known length straight into the memory it will be uploaded from:
 * a transfer buffer the local device lends (pinned memory on cuda, its shared region in process
 * isolation), so the upload copies nothing more on the host; a heap buffer of that length when the
 * device is elsewhere or lends no more now. Runs on the request's event loop.
 */
final class BodyReader {

  private BodyReader() {
  }

  /**
   * The body, exactly {@code expected} bytes; a body of another length fails, once it is read (the
   * memory given back), with an IllegalArgumentException whose message {@code wrongLength} makes of
   * the length received. The caller gives back the buffer of a success
   * ({@link DeviceVerticle#releaseTransferBuffer}).
   */
  static Future<Buffer> read(HttpServerRequest request, int expected, DeviceVerticle local,
                             LongFunction<String> wrongLength) {
    Buffer into = lend(expected, local);
    Promise<Buffer> body = Promise.promise();
    long[] received = new long[1];
    request.handler(chunk -> {
      received[0] += chunk.length();
      if (received[0] <= expected) {
        into.appendBuffer(chunk);
      }
    });
    request.exceptionHandler(t -> {
      release(into, local);
      body.tryFail(t);
    });
    request.endHandler(v -> {
      if (received[0] == expected) {
        body.tryComplete(into);
      } else {
        release(into, local);
        body.tryFail(new IllegalArgumentException(wrongLength.apply(received[0])));
      }
    });
    request.resume();
    return body.future();
  }

  /** Reads and drops the rest of a body that will not be used, then runs {@code then}. */
  static void drain(HttpServerRequest request, Runnable then) {
    if (request.isEnded()) {
      then.run();
      return;
    }
    request.handler(chunk -> { });
    request.exceptionHandler(t -> { });
    request.endHandler(v -> then.run());
    request.resume();
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
