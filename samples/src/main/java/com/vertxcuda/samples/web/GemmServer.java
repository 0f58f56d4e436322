package com.vertxcuda.samples.web;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.json.DecodeException;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Vert.x Web endpoint that multiplies two square matrices on the GPU, as a model of a GPU
 * endpoint: {@code POST /gemm?n=N} with {@code application/octet-stream} A then B (row-major,
 * little-endian float32, 8 n² bytes), answered C the same way (4 n² bytes); or JSON
 * {@code {"n": 2, "a": [1,2,3,4], "b": [5,6,7,8]}} answered {@code {"n": 2, "c": [19,22,43,50]}}.
 *
 * <p>The request's bytes go to the device as they came (one upload of the body into a device
 * buffer the instance keeps for that n), and the downloaded bytes are the response: no float is
 * decoded or encoded at all (the JSON convenience form's are, on a worker). Deploy one instance
 * per event loop ({@link #deploy}); each takes on at most {@code maxInFlight} requests and answers
 * the next 503 with Retry-After at once. A device that refuses (QUEUE_FULL) is a 429, one that lost
 * its context (CONTEXT_LOST) a 503, both with Retry-After, and so is a request that met a buffer the
 * instance kept from a context since rebuilt (STALE_HANDLE: kept buffers are dropped on the device's
 * GENERATION_CHANGED); other device failures their code's
 * status; a body that is not two n x n matrices a 400 that says why, one that sends nothing for
 * {@link GemmServerOptions#setBodyIdleTimeout bodyIdleTimeout}, or that is not whole within
 * {@link GemmServerOptions#setBodyTimeout bodyTimeout}, a 408 (its connection closed). Every request is answered
 * once — those in flight when the instance stops too (a graceful shutdown) — and the instance's device
 * buffers are freed when it stops. With
 * {@link GemmServerOptions#setEcho echo}, {@code POST /echo} takes the same requests the same way and
 * answers A's bytes with no GPU work: the HTTP ceiling to measure the endpoint against (the bench module's {@code WebLoad}).
 *
 * <pre>java -cp ... com.vertxcuda.samples.web.GemmServer [port] [--echo]   (8080; host backend without a GPU)</pre>
 */
public final class GemmServer extends VerticleBase {

  private final GemmServerOptions options;
  private final DeviceVerticle local;
  private DeviceClient device;
  private BlasClient blas;
  private OperandSlots slots;
  private HttpServer server;
  private int inFlight;

  /**
   * One instance serving {@code options}; {@code local}, the device when it runs in this JVM, lends
   * the memory bodies are read into and takes it and the downloads' back as soon as each is done
   * with (null: bodies are read into the heap, and lent memory returns when collected).
   */
  public GemmServer(GemmServerOptions options, DeviceVerticle local) {
    this.options = new GemmServerOptions(options);
    this.local = local;
  }

  /** Deploys {@code instances} servers (one per event loop is the model) and returns them. */
  public static Future<List<GemmServer>> deploy(Vertx vertx, GemmServerOptions options, DeviceVerticle local,
                                                int instances) {
    List<GemmServer> servers = new ArrayList<>();
    return vertx.deployVerticle(() -> {
      GemmServer s = new GemmServer(options, local);
      synchronized (servers) {
        servers.add(s);
      }
      return s;
    }, new DeploymentOptions().setInstances(instances)).map(id -> servers);
  }

  public static void main(String[] args) {
    VertxOptions vertxOptions = new VertxOptions();
    Vertx vertx = Vertx.vertx(vertxOptions);
    GemmServerOptions options = new GemmServerOptions();
    for (String a : args) {
      if (a.equals("--echo")) {
        options.setEcho(true);
      } else {
        options.setPort(Integer.parseInt(a));
      }
    }
    DeviceVerticle device = new DeviceVerticle(new DeviceOptions());
    vertx.deployVerticle(device)
      .compose(id -> deploy(vertx, options, device, vertxOptions.getEventLoopPoolSize()))
      .onSuccess(s -> System.out.println("POST matrices to http://localhost:" + s.get(0).actualPort() + "/gemm ("
        + s.size() + " instances)"))
      .onFailure(t -> {
        System.err.println("gemm server: " + t.getMessage());
        vertx.close();
      });
  }

  @Override
  public Future<?> start() {
    device = DeviceClient.create(vertx);
    blas = BlasClient.create(vertx);
    slots = new OperandSlots(vertx, device, options.getMaxInFlight(), options.isKeepBuffers());
    Router router = Router.router(vertx);
    router.post("/gemm").consumes(Operands.OCTETS).handler(rc -> octets(rc, false));
    router.post("/gemm").handler(rc -> json(rc, false));
    if (options.isEcho()) {
      router.post("/echo").consumes(Operands.OCTETS).handler(rc -> octets(rc, true));
      router.post("/echo").handler(rc -> json(rc, true));
    }
    // curl sends a body over 1 MiB only after "100 Continue" (or a second's wait). A body that stops
    // coming is timed out by BodyReader, not HttpServerOptions.setIdleTimeout: that closes any
    // connection with no bytes either way, so it would also cut off a request waiting on the GPU
    // (nothing moves while it does) without an answer, and a keep-alive connection between requests,
    // which holds no place or memory of ours.
    return vertx.createHttpServer(new HttpServerOptions().setHandle100ContinueAutomatically(true)).requestHandler(router)
      .listen(options.getPort()).onSuccess(s -> server = s);
  }

  @Override
  public Future<?> stop() {
    // Gracefully: requests in flight are answered before their connections close (close() cut them off).
    return server.shutdown(SHUTDOWN_SECONDS, TimeUnit.SECONDS).eventually(() -> slots.close());
  }

  /** How long a stopping server waits for the requests in flight. */
  static final long SHUTDOWN_SECONDS = 30;

  public int actualPort() {
    return server.actualPort();
  }

  // An octet-stream request is checked before its body is read (a refused body is read and dropped,
  // then answered), and read straight into the memory the upload reads from.
  private void octets(RoutingContext rc, boolean echo) {
    HttpServerRequest request = rc.request();
    int n;
    try {
      n = Operands.size(request.getParam("n"), options.getMaxN());
    } catch (IllegalArgumentException e) {
      drainThen(rc, () -> text(rc.response().setStatusCode(400), e.getMessage()));
      return;
    }
    String length = request.getHeader("content-length");
    if (length != null && !length.equals(Long.toString(8L * n * n))) {
      drainThen(rc, () -> text(rc.response().setStatusCode(400), Operands.wrongLength(n, length)));
      return;
    }
    if (!echo && !admit(rc)) {
      return;
    }
    Future<Buffer> read;
    try {
      read = BodyReader.read(vertx, request, 8 * n * n, local, options.getBodyIdleTimeout(), options.getBodyTimeout(),
        received -> Operands.wrongLength(n, Long.toString(received)));
    } catch (RuntimeException | OutOfMemoryError e) {
      read = Future.failedFuture(e); // no memory for the body: counted out below, and answered
    }
    read.onComplete(body -> {
      if (body.failed()) {
        if (!echo) {
          inFlight--;
        }
        unread(rc, body.cause());
      } else {
        work(rc, new Operands(n, body.result()), echo);
      }
    });
  }

  // A JSON body can be hundreds of MB: it is decoded on a worker, as its answer is encoded (respond),
  // one at a time per instance, so the convenience form takes at most a worker and one document's
  // numbers per event loop.
  private void json(RoutingContext rc, boolean echo) {
    BodyReader.readUpTo(vertx, rc.request(), jsonLimit(), options.getBodyIdleTimeout(), options.getBodyTimeout()).onComplete(body -> {
      if (body.failed()) {
        unread(rc, body.cause());
        return;
      }
      vertx.executeBlocking(() -> Operands.json(body.result(), options.getMaxN())).onComplete(decoded -> {
        Throwable t = decoded.cause();
        if (t instanceof IllegalArgumentException || t instanceof DecodeException || t instanceof ClassCastException) {
          text(rc.response().setStatusCode(400), t.getMessage());
        } else if (t != null) {
          rc.fail(t);
        } else if (echo || admit(rc)) {
          work(rc, decoded.result(), echo);
        }
      });
    });
  }

  // JSON spells a float in up to about 16 characters; a Buffer holds at most what an array does.
  private int jsonLimit() {
    return (int) Math.min(2L * options.getMaxN() * options.getMaxN() * 16 + 1024, Integer.MAX_VALUE - 8);
  }

  /** Counts the request in, or answers 503 with Retry-After (its body read and dropped) when the instance is at its bound. */
  private boolean admit(RoutingContext rc) {
    if (inFlight < options.getMaxInFlight()) {
      inFlight++;
      return true;
    }
    String message = "this server instance works on " + inFlight + " requests (maxInFlight); try again later";
    drainThen(rc, () -> refuse(rc.response().setStatusCode(503), message));
    return false;
  }

  /** Reads and drops the body of a request that will not be worked on, then runs {@code answer}. */
  private void drainThen(RoutingContext rc, Runnable answer) {
    BodyReader.drain(vertx, rc.request(), options.getBodyIdleTimeout(), options.getBodyTimeout()).onComplete(body -> {
      if (body.succeeded()) {
        answer.run();
      } else {
        unread(rc, body.cause());
      }
    });
  }

  // A body that stopped coming is answered 408. Over HTTP/1.x its connection is closed: the rest of
  // the body may still arrive, and would read as the next request. Over HTTP/2 only its stream ends
  // (the connection's other requests go on), reset if the client still has body to send.
  private void unread(RoutingContext rc, Throwable cause) {
    int status = cause instanceof BodyReader.Failure ? ((BodyReader.Failure) cause).status : 400;
    HttpServerResponse response = rc.response();
    if (status != 408) {
      text(response.setStatusCode(status), cause.getMessage());
    } else if (!response.closed()) {
      boolean http1 = rc.request().version() != HttpVersion.HTTP_2;
      if (http1) {
        response.putHeader("connection", "close");
      }
      response.setStatusCode(408).putHeader("content-type", "text/plain").end(cause.getMessage() + "\n")
        .onComplete(x -> {
          if (http1) {
            rc.request().connection().close();
          } else if (!rc.request().isEnded()) {
            response.reset();
          }
        });
    }
  }

  private void work(RoutingContext rc, Operands in, boolean echo) {
    if (echo) {
      respond(rc, in, in.bytes.slice(0, in.matrixBytes()), in.bytes);
      return;
    }
    slots.take(in.n).onComplete(taken -> {
      if (taken.failed()) {
        inFlight--;
        release(in.bytes);
        fail(rc, taken.cause());
      } else {
        multiply(rc, in, taken.result());
      }
    });
  }

  // One device buffer holds A, B and C; the body (A then B) is one upload. cuBLAS is column-major: a
  // row-major matrix reads as its transpose, and C^T = B^T A^T, so passing B before A gives
  // row-major C with no transposition. The three requests go at once (they keep their order on the
  // device); the answer goes at the first failure or with the download, and the buffer is taken back
  // when all three are answered.
  private void multiply(RoutingContext rc, Operands in, BufferHandle slot) {
    int n = in.n;
    long nn = (long) n * n;
    BufferHandle a = slot.view(0, nn);
    BufferHandle b = slot.view(nn, nn);
    BufferHandle c = slot.view(2 * nn, nn);
    Future<BufferHandle> upload = device.upload(slot.view(0, 2 * nn), in.bytes);
    upload.onComplete(x -> release(in.bytes));
    Future<BufferHandle> gemm = blas.gemm(Transpose.N, Transpose.N, n, n, n, 1.0, b, n, a, n, 0.0, c, n);
    Future<Buffer> download = device.download(c);
    Future.all(upload, gemm, download).onComplete(all -> {
      if (all.succeeded()) {
        respond(rc, in, download.result(), null);
      } else {
        fail(rc, all.cause());
      }
    });
    Future.join(upload, gemm, download).onComplete(settled -> {
      inFlight--;
      if (settled.failed() && download.succeeded()) {
        release(download.result());
      }
      slots.give(n, slot, settled.cause());
    });
  }

  // The answer's bytes, and the memory they lie in (the body's, for the echo), are given back once written.
  private void respond(RoutingContext rc, Operands in, Buffer product, Buffer within) {
    Buffer lent = within != null ? within : product;
    HttpServerResponse response = rc.response();
    if (response.closed()) {
      release(lent);
    } else if (in.json) {
      vertx.executeBlocking(() -> Operands.json(in.n, product)).onComplete(json -> {
        release(lent);
        if (json.failed()) {
          rc.fail(json.cause());
        } else if (!response.closed()) {
          response.putHeader("content-type", "application/json").end(json.result());
        }
      });
    } else {
      response.putHeader("content-type", Operands.OCTETS).end(product).onComplete(x -> release(lent));
    }
  }

  private void fail(RoutingContext rc, Throwable cause) {
    CudaException failure = Failures.toCudaException(cause);
    // A stale handle here is one of the server's own kept buffers from before a rebuild, not the
    // client's: the request was fine, and the next one gets a fresh buffer (503, not 410 Gone).
    boolean stale = failure.code() == FailureCode.STALE_HANDLE;
    HttpServerResponse response = rc.response().setStatusCode(stale ? 503 : failure.code().code());
    String message = failure.code() + ": " + Failures.text(failure);
    if (stale || failure.code() == FailureCode.QUEUE_FULL || failure.code() == FailureCode.CONTEXT_LOST) {
      refuse(response, message);
    } else {
      text(response, message);
    }
  }

  private void refuse(HttpServerResponse response, String message) {
    text(response.putHeader("retry-after", Integer.toString(options.getRetryAfter())), message);
  }

  private static void text(HttpServerResponse response, String message) {
    if (!response.closed()) {
      response.putHeader("content-type", "text/plain").end(message + "\n");
    }
  }

  private void release(Buffer lent) {
    if (local != null) {
      local.releaseTransferBuffer(lent);
    }
  }
}
