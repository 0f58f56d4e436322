package com.vertxcuda.samples.web;

import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import com.vertxcuda.internal.LoopGaps;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A large JSON request (n = 1024, about 24 MB of numbers each way in) never stops the server's event
 * loop: a 1 ms periodic timer on it keeps firing while the body is decoded and the answer encoded
 * (the gap allowed: 100 ms, for a 2-core CI host, beyond what stopped every thread of the JVM at the
 * same time, which a plain thread ticking beside the loop measures), and the product is right.
 */
@Tag("alone")
class GemmServerJsonLoopTest {

  private static final int N = 1024;
  private static final long ALLOWED_GAP_MS = 100;

  private Vertx server;
  private Vertx client;

  @AfterEach
  void down() throws Exception {
    if (client != null) {
      get(client.close());
    }
    if (server != null) {
      get(server.close());
    }
  }

  @Test
  void aTimerOnTheServersLoopKeepsFiringAndTheProductIsRight() throws Exception {
    // One event loop: the server's, the device's and the timer's are the same thread. The client has a Vert.x of its own.
    server = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
    client = Vertx.vertx();
    DeviceVerticle device = new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.HOST));
    get(server.deployVerticle(device));
    int port = get(GemmServer.deploy(server, new GemmServerOptions().setPort(0).setMaxN(N), device, 1)).get(0).actualPort();

    Random random = new Random(11);
    float[] a = new float[N * N];
    float[] b = new float[N * N];
    for (int i = 0; i < N * N; i++) {
      a[i] = random.nextFloat() * 2 - 1;
      b[i] = random.nextFloat() * 2 - 1;
    }
    Buffer body = Buffer.buffer(new JsonObject().put("n", N).put("a", array(a)).put("b", array(b)).encode());
    assertTrue(body.length() > 20_000_000, "a body of " + body.length() + " bytes");

    Context loop = server.getOrCreateContext();
    CompletableFuture<HttpResponse<Buffer>> done = new CompletableFuture<>();
    LoopGaps gaps = new LoopGaps(server);
    CompletableFuture<Long> ticking = new CompletableFuture<>();
    loop.runOnContext(v -> ticking.complete(gaps.tick()));
    ticking.get(10, TimeUnit.SECONDS);
    // Held until the answer: a client no longer referenced is closed when collected, its requests too.
    WebClient web = WebClient.create(client);
    web.post(port, "localhost", "/gemm").putHeader("content-type", "application/json")
      .sendBuffer(body)
      .onComplete(ar -> loop.runOnContext(x -> {
        // The gap up to the answer counts too (the last tick may be later than the loop's last work).
        gaps.mark();
        gaps.stop();
        if (ar.succeeded()) {
          done.complete(ar.result());
        } else {
          done.completeExceptionally(ar.cause());
        }
      }));
    HttpResponse<Buffer> answer = done.get(120, TimeUnit.SECONDS);
    web.close();
    double widestMs = gaps.widestMs();
    double controlMs = gaps.controlMs();
    System.out.printf("[figure] server loop during a %d MB JSON GEMM of n=%d: widest timer gap %.1f ms (a plain thread"
      + " beside it: %.1f ms)%n", body.length() / 1_000_000, N, widestMs, controlMs);

    assertEquals(200, answer.statusCode(), () -> answer.bodyAsString().substring(0, Math.min(500, answer.bodyAsString().length())));
    JsonObject json = answer.bodyAsJsonObject();
    assertEquals(N, json.getInteger("n"));
    JsonArray c = json.getJsonArray("c");
    assertEquals(N * N, c.size());
    for (int[] ij : new int[][] {{0, 0}, {0, N - 1}, {N - 1, 0}, {517, 33}, {N - 1, N - 1}}) {
      int i = ij[0];
      int j = ij[1];
      double expected = 0;
      double scale = 0;
      for (int k = 0; k < N; k++) {
        expected += (double) a[i * N + k] * b[k * N + j];
        scale += Math.abs((double) a[i * N + k] * b[k * N + j]);
      }
      assertEquals(expected, c.getDouble(i * N + j), 1e-5 * scale, "C[" + i + "][" + j + "]");
    }
    // The loop may stop as long as every thread did (the JVM's pauses are not the server's), plus the allowance.
    assertTrue(widestMs <= ALLOWED_GAP_MS + controlMs, "the server's loop stopped for " + widestMs
      + " ms, while a plain thread beside it stopped at most " + controlMs + " ms");
  }

  private static JsonArray array(float[] values) {
    JsonArray array = new JsonArray();
    for (float v : values) {
      array.add(v);
    }
    return array;
  }

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }
}
