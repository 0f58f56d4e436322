package com.vertxcuda.samples.web;

import com.vertxcuda.DeviceClient;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.message.FaultRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The GEMM endpoint at its edges: a context rebuilt under its kept buffers, the largest n, and a
 * request in flight when the instance stops — each request answered with what a client can act on.
 */
class GemmServerEdgesTest {

  private static final LoadBodies BODIES = new LoadBodies(4, 1, 7);
  private Vertx vertx;
  private WebClient web;

  @BeforeEach
  void up() {
    vertx = Vertx.vertx();
    web = WebClient.create(vertx);
  }

  @AfterEach
  void down() throws Exception {
    get(vertx.close());
  }

  static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  private Future<HttpResponse<Buffer>> post(int port) {
    return web.post(port, "localhost", "/gemm").addQueryParam("n", "4")
      .putHeader("content-type", "application/octet-stream").sendBuffer(BODIES.bodies.get(0));
  }

  @Test
  void aRequestAfterARebuildIsServed() throws Exception {
    DeviceVerticle device = new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.HOST)
      .setIsolation(Isolation.IN_PROCESS).setFaultInjection(true));
    get(vertx.deployVerticle(device));
    DeviceClient client = DeviceClient.create(vertx);
    Promise<Void> rebuilt = Promise.promise();
    client.events(e -> {
      if (e.getType() == DeviceEvent.Type.GENERATION_CHANGED) {
        rebuilt.tryComplete();
      }
    });
    int port = get(GemmServer.deploy(vertx, new GemmServerOptions().setPort(-1), device, 1)).get(0).actualPort();
    assertEquals(200, get(post(port)).statusCode());
    new RequestSender(vertx, client.address(), 30_000).request(new FaultRequest(FaultRequest.Kind.POISON));
    get(rebuilt.future());
    Thread.sleep(200); // the instance hears the event too
    HttpResponse<Buffer> after = get(post(port));
    assertEquals(200, after.statusCode(), after.bodyAsString());
    assertEquals(BODIES.products.get(0), after.body());
  }

  @Test
  void anNWhoseBodyCannotBeOneBufferIsRefusedByTheOptions() {
    assertThrows(IllegalArgumentException.class, () -> new GemmServerOptions().setMaxN(16_384));
    assertEquals(16_383, new GemmServerOptions().setMaxN(16_383).getMaxN());
  }

  @Test
  void aRequestInFlightWhenTheInstanceStopsIsAnswered() throws Exception {
    DeviceVerticle device = new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.HOST)
      .setIsolation(Isolation.IN_PROCESS).setFaultInjection(true).setOpenDelay(2_000));
    vertx.deployVerticle(device);
    Thread.sleep(200);
    GemmServer server = get(GemmServer.deploy(vertx, new GemmServerOptions().setPort(-1), device, 1)).get(0);
    Future<HttpResponse<Buffer>> held = post(server.actualPort()); // waits for the device's start
    Thread.sleep(500);
    get(vertx.undeploy(server.deploymentID()));
    HttpResponse<Buffer> answer = get(held);
    assertEquals(200, answer.statusCode(), answer.bodyAsString());
    assertEquals(BODIES.products.get(0), answer.body());
  }
}
