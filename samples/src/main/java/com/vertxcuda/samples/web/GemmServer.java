package com.vertxcuda.samples.web;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.Failures;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;

/**
 * A Vert.x Web endpoint that multiplies two square matrices on the GPU: {@code POST /gemm} with
 * either
 * <ul>
 *   <li>JSON {@code {"n": 2, "a": [1,2,3,4], "b": [5,6,7,8]}} (row-major), answered
 *   {@code {"n": 2, "c": [19,22,43,50]}}; or</li>
 *   <li>{@code application/octet-stream} with {@code ?n=2}: A then B as little-endian floats,
 *   row-major, answered C the same way.</li>
 * </ul>
 * A body that does not hold two n x n matrices is a 400 that says why; a device failure is answered
 * with its failure code's HTTP status (429 QUEUE_FULL, 503 CONTEXT_LOST, 507 OUT_OF_MEMORY...). Each
 * request's three buffers live in a {@link DeviceClient#withScope scope}: freed on every path.
 *
 * <pre>java -cp ... com.vertxcuda.samples.web.GemmServer [port]   (default 8080; host backend without a GPU)</pre>
 */
public final class GemmServer extends VerticleBase {

  /** The largest n accepted: 1024 (a 4 MiB matrix). */
  public static final int MAX_N = 1024;

  private final int port;
  private DeviceClient device;
  private BlasClient blas;
  private HttpServer server;

  /** Serves on {@code port} (0: any free port; see {@link #actualPort()}), on this node's device 0. */
  public GemmServer(int port) {
    this.port = port;
  }

  public static void main(String[] args) {
    Vertx vertx = Vertx.vertx();
    GemmServer server = new GemmServer(args.length > 0 ? Integer.parseInt(args[0]) : 8080);
    vertx.deployVerticle(new DeviceVerticle(new DeviceOptions()))
      .compose(id -> vertx.deployVerticle(server))
      .onSuccess(id -> System.out.println("POST matrices to http://localhost:" + server.actualPort() + "/gemm"))
      .onFailure(t -> {
        System.err.println("gemm server: " + t.getMessage());
        vertx.close();
      });
  }

  @Override
  public Future<?> start() {
    device = DeviceClient.create(vertx);
    blas = BlasClient.create(vertx);
    Router router = Router.router(vertx);
    router.post("/gemm").handler(BodyHandler.create().setBodyLimit(2L * MAX_N * MAX_N * 4 * 8)).handler(this::gemm);
    return vertx.createHttpServer().requestHandler(router).listen(port).onSuccess(s -> server = s);
  }

  public int actualPort() {
    return server.actualPort();
  }

  private void gemm(RoutingContext rc) {
    String type = rc.request().getHeader("content-type");
    boolean raw = type != null && type.startsWith("application/octet-stream");
    Operands in;
    try {
      in = raw ? Operands.raw(rc.request().getParam("n"), rc.body().buffer()) : Operands.json(rc.body().buffer());
    } catch (IllegalArgumentException | DecodeException | ClassCastException e) {
      rc.response().setStatusCode(400).putHeader("content-type", "text/plain").end(e.getMessage() + "\n");
      return;
    }
    multiply(in).onComplete(ar -> {
      if (ar.failed()) {
        CudaException failure = Failures.toCudaException(ar.cause());
        rc.response().setStatusCode(failure.code().code()).putHeader("content-type", "text/plain")
          .end(failure.code() + ": " + failure.getMessage() + "\n");
      } else if (raw) {
        Buffer out = Buffer.buffer(ar.result().length * 4);
        for (float v : ar.result()) {
          out.appendFloatLE(v);
        }
        rc.response().putHeader("content-type", "application/octet-stream").end(out);
      } else {
        JsonArray c = new JsonArray();
        for (float v : ar.result()) {
          c.add(v);
        }
        rc.response().putHeader("content-type", "application/json").end(new JsonObject().put("n", in.n).put("c", c).encode());
      }
    });
  }

  // cuBLAS is column-major: a row-major matrix reads as its transpose, and C^T = B^T A^T, so passing
  // B before A gives row-major C with no transposition.
  private Future<float[]> multiply(Operands in) {
    int n = in.n;
    return device.withScope(scope -> scope.alloc(DType.F32, (long) n * n).compose(a ->
      scope.alloc(DType.F32, (long) n * n).compose(b ->
        scope.alloc(DType.F32, (long) n * n).compose(c ->
          device.upload(a, in.a).compose(x -> device.upload(b, in.b))
            .compose(x -> blas.gemm(Transpose.N, Transpose.N, n, n, n, 1.0, b, n, a, n, 0.0, c, n))
            .compose(device::downloadFloats)))));
  }

  /** Two n x n row-major matrices, checked. */
  static final class Operands {
    final int n;
    final float[] a;
    final float[] b;

    private Operands(int n, float[] a, float[] b) {
      this.n = n;
      this.a = a;
      this.b = b;
    }

    static Operands json(Buffer body) {
      if (body == null || body.length() == 0) {
        throw new IllegalArgumentException("the body is empty: send {\"n\": N, \"a\": [N*N numbers], \"b\": [N*N numbers]}");
      }
      JsonObject json = new JsonObject(body);
      Object n = json.getValue("n");
      if (!(n instanceof Integer)) {
        throw new IllegalArgumentException("\"n\" must be an integer, not " + n);
      }
      int size = size((Integer) n);
      return new Operands(size, matrix(json.getValue("a"), "a", size), matrix(json.getValue("b"), "b", size));
    }

    static Operands raw(String n, Buffer body) {
      if (n == null) {
        throw new IllegalArgumentException("a raw body needs ?n=N");
      }
      int size;
      try {
        size = size(Integer.parseInt(n));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("n must be an integer, not " + n);
      }
      long expected = 2L * size * size * 4;
      if (body == null || body.length() != expected) {
        throw new IllegalArgumentException("a raw body of n=" + size + " holds " + expected
          + " bytes (A then B, little-endian floats), not " + (body == null ? 0 : body.length()));
      }
      float[] a = new float[size * size];
      float[] b = new float[size * size];
      for (int i = 0; i < a.length; i++) {
        a[i] = body.getFloatLE(i * 4);
        b[i] = body.getFloatLE((a.length + i) * 4);
      }
      return new Operands(size, a, b);
    }

    private static int size(int n) {
      if (n < 1 || n > MAX_N) {
        throw new IllegalArgumentException("n must be between 1 and " + MAX_N + ", not " + n);
      }
      return n;
    }

    private static float[] matrix(Object value, String name, int n) {
      if (!(value instanceof JsonArray) || ((JsonArray) value).size() != n * n) {
        throw new IllegalArgumentException("\"" + name + "\" must be an array of n*n = " + n * n + " numbers");
      }
      JsonArray array = (JsonArray) value;
      float[] out = new float[n * n];
      for (int i = 0; i < out.length; i++) {
        if (!(array.getValue(i) instanceof Number)) {
          throw new IllegalArgumentException("\"" + name + "\"[" + i + "] is not a number: " + array.getValue(i));
        }
        out[i] = ((Number) array.getValue(i)).floatValue();
      }
      return out;
    }
  }
}
