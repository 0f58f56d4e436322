package com.vertxcuda.samples.web;

import com.vertxcuda.DeviceClient;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.message.DescribeRequest;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.message.FaultRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * When the work cannot be taken on, the answer says so at once and when to come back: 429 with
 * Retry-After when the device refuses (QUEUE_FULL), 503 with Retry-After when it lost its context
 * (CONTEXT_LOST) or the server instance is at its bound; the request held meanwhile still gets its
 * product.
 */
@ExtendWith(VertxExtension.class)
class GemmServerRefusalsTest {

  private static final LoadBodies BODIES = new LoadBodies(4, 1, 7);

  @Test
  void aDeviceThatRefusesIs429WithRetryAfter(Vertx vertx, VertxTestContext test) {
    // maxInFlight 0: the device turns every request away with QUEUE_FULL.
    DeviceVerticle device = new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.HOST).setMaxInFlight(0));
    WebClient web = WebClient.create(vertx);
    vertx.deployVerticle(device)
      .compose(id -> GemmServer.deploy(vertx, new GemmServerOptions().setPort(-1).setRetryAfter(2), device, 1))
      .compose(servers -> post(web, servers.get(0).actualPort()))
      .onComplete(test.succeeding(r -> test.verify(() -> {
        assertEquals(429, r.statusCode(), r.bodyAsString());
        assertEquals("2", r.getHeader("retry-after"));
        assertTrue(r.bodyAsString().startsWith("QUEUE_FULL"), r.bodyAsString());
        test.completeNow();
      })));
  }

  @Test
  void aLostContextIs503WithRetryAfter(Vertx vertx, VertxTestContext test) {
    // restartLimit 0: the first sticky error leaves the device LOST, answering CONTEXT_LOST.
    DeviceVerticle device = new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.HOST).setFaultInjection(true)
      .setRestartLimit(0));
    DeviceClient client = DeviceClient.create(vertx);
    WebClient web = WebClient.create(vertx);
    Promise<Void> lost = Promise.promise();
    client.events(e -> {
      if (e.getType() == DeviceEvent.Type.LOST) {
        lost.tryComplete();
      }
    });
    int[] port = new int[1];
    vertx.deployVerticle(device)
      .compose(id -> GemmServer.deploy(vertx, new GemmServerOptions().setPort(-1), device, 1))
      .compose(servers -> {
        port[0] = servers.get(0).actualPort();
        return post(web, port[0]); // served: the instance now keeps a device buffer for n=4
      })
      .compose(ok -> {
        test.verify(() -> assertEquals(BODIES.products.get(0), ok.bodyAsBuffer()));
        new RequestSender(vertx, client.address(), 30_000).request(new FaultRequest(FaultRequest.Kind.POISON));
        return lost.future();
      })
      .compose(x -> Future.all(post(web, port[0]), post(web, port[0])))
      .onComplete(test.succeeding(both -> test.verify(() -> {
        for (int i = 0; i < 2; i++) {
          HttpResponse<Buffer> r = both.resultAt(i);
          assertEquals(503, r.statusCode(), r.bodyAsString());
          assertEquals("1", r.getHeader("retry-after"));
          assertTrue(r.bodyAsString().startsWith("CONTEXT_LOST"), r.bodyAsString());
        }
        test.completeNow();
      })));
  }

  @Test
  void pastTheInstancesBoundIs503WithRetryAfterAndTheHeldRequestIsServed(Vertx vertx, VertxTestContext test) {
    // The context opens 3 s late: the first request waits in the device while the second arrives.
    DeviceVerticle device = new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.HOST).setFaultInjection(true)
      .setOpenDelay(3_000));
    vertx.deployVerticle(device);
    WebClient web = WebClient.create(vertx);
    describeWhenListening(vertx, DeviceClient.create(vertx).address())
      .compose(info -> GemmServer.deploy(vertx, new GemmServerOptions().setPort(-1).setMaxInFlight(1), device, 1))
      .compose(servers -> Future.all(post(web, servers.get(0).actualPort()), post(web, servers.get(0).actualPort())))
      .onComplete(test.succeeding(both -> test.verify(() -> {
        List<HttpResponse<Buffer>> answers = List.of(both.resultAt(0), both.resultAt(1));
        HttpResponse<Buffer> served = answers.stream().filter(r -> r.statusCode() == 200).findFirst().orElseThrow(
          () -> new AssertionError("one request is served: " + answers.get(0).statusCode() + ", " + answers.get(1).statusCode()));
        HttpResponse<Buffer> refused = answers.get(served == answers.get(0) ? 1 : 0);
        assertEquals(BODIES.products.get(0), served.bodyAsBuffer());
        assertEquals(503, refused.statusCode(), refused.bodyAsString());
        assertEquals("1", refused.getHeader("retry-after"));
        assertTrue(refused.bodyAsString().contains("maxInFlight"), refused.bodyAsString());
        test.completeNow();
      })));
  }

  private static Future<HttpResponse<Buffer>> post(WebClient web, int port) {
    return web.post(port, "localhost", "/gemm").addQueryParam("n", "4")
      .putHeader("content-type", "application/octet-stream").sendBuffer(BODIES.bodies.get(0));
  }

  private static Future<DeviceInfo> describeWhenListening(Vertx vertx, String address) {
    return vertx.eventBus().<DeviceInfo>request(address, new DescribeRequest()).map(Message::body)
      .recover(t -> vertx.timer(10).compose(x -> describeWhenListening(vertx, address)));
  }
}
