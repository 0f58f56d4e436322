package com.vertxcuda.samples.web;

import com.vertxcuda.DeviceClient;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.impl.RequestSender;
import com.vertxcuda.message.DeviceStats;
import com.vertxcuda.message.FaultRequest;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The web sample over real HTTP against the host backend: products, 400s, a typed failure, no leak. */
@ExtendWith(VertxExtension.class)
class GemmServerTest {

  private WebClient web;
  private int port;
  private DeviceClient device;
  private DeviceStats baseline;

  @BeforeEach
  void deploy(Vertx vertx, VertxTestContext test) {
    GemmServer server = new GemmServer(0);
    web = WebClient.create(vertx);
    device = DeviceClient.create(vertx);
    vertx.deployVerticle(new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.HOST).setFaultInjection(true)))
      .compose(id -> vertx.deployVerticle(server))
      .compose(id -> device.stats())
      .onComplete(test.succeeding(stats -> {
        port = server.actualPort();
        baseline = stats;
        test.completeNow();
      }));
  }

  @Test
  void multipliesJsonAndRawMatricesAndFreesEverything(VertxTestContext test) {
    JsonObject body = new JsonObject().put("n", 2).put("a", new JsonArray("[1,2,3,4]")).put("b", new JsonArray("[5,6,7,8]"));
    Buffer raw = Buffer.buffer();
    for (float v : new float[] {1, 2, 3, 4, 5, 6, 7, 8}) {
      raw.appendFloatLE(v);
    }
    web.post(port, "localhost", "/gemm").sendJsonObject(body).compose(json -> {
      test.verify(() -> {
        assertEquals(200, json.statusCode(), json.bodyAsString());
        assertEquals(new JsonArray("[19.0,22.0,43.0,50.0]"), json.bodyAsJsonObject().getJsonArray("c"));
      });
      return web.post(port, "localhost", "/gemm").addQueryParam("n", "2")
        .putHeader("content-type", "application/octet-stream").sendBuffer(raw);
    }).compose(bytes -> {
      test.verify(() -> {
        assertEquals(200, bytes.statusCode());
        Buffer c = bytes.bodyAsBuffer();
        assertEquals(16, c.length());
        assertEquals(19f, c.getFloatLE(0));
        assertEquals(22f, c.getFloatLE(4));
        assertEquals(43f, c.getFloatLE(8));
        assertEquals(50f, c.getFloatLE(12));
      });
      return device.stats();
    }).onComplete(test.succeeding(stats -> test.verify(() -> {
      assertBaseline(stats);
      test.completeNow();
    })));
  }

  @Test
  void badBodiesAre400sAndTouchNoDevice(VertxTestContext test) {
    Future<HttpResponse<Buffer>> notJson = web.post(port, "localhost", "/gemm").putHeader("content-type", "application/json")
      .sendBuffer(Buffer.buffer("{\"n\": 2, \"a\": [1,2"));
    Future<HttpResponse<Buffer>> shortMatrix = web.post(port, "localhost", "/gemm")
      .sendJsonObject(new JsonObject().put("n", 2).put("a", new JsonArray("[1,2,3]")).put("b", new JsonArray("[5,6,7,8]")));
    Future<HttpResponse<Buffer>> notANumber = web.post(port, "localhost", "/gemm")
      .sendJsonObject(new JsonObject().put("n", 1).put("a", new JsonArray("[\"x\"]")).put("b", new JsonArray("[1]")));
    Future<HttpResponse<Buffer>> rawTooShort = web.post(port, "localhost", "/gemm").addQueryParam("n", "2")
      .putHeader("content-type", "application/octet-stream").sendBuffer(Buffer.buffer(new byte[12]));
    Future.all(notJson, shortMatrix, notANumber, rawTooShort).compose(all -> {
      test.verify(() -> {
        for (int i = 0; i < all.size(); i++) {
          HttpResponse<Buffer> r = all.resultAt(i);
          assertEquals(400, r.statusCode(), r.bodyAsString());
        }
        assertTrue(shortMatrix.result().bodyAsString().contains("n*n = 4"), shortMatrix.result().bodyAsString());
      });
      return device.stats();
    }).onComplete(test.succeeding(stats -> test.verify(() -> {
      assertBaseline(stats);
      test.completeNow();
    })));
  }

  @Test
  void aDeviceFailureIsItsHttpStatusAndLeaksNothing(Vertx vertx, VertxTestContext test) {
    JsonObject body = new JsonObject().put("n", 1).put("a", new JsonArray("[2]")).put("b", new JsonArray("[3]"));
    new RequestSender(vertx, device.address(), 30_000).request(new FaultRequest(FaultRequest.Kind.FAIL_NEXT_ALLOCATION))
      .compose(x -> web.post(port, "localhost", "/gemm").sendJsonObject(body))
      .compose(failed -> {
        test.verify(() -> {
          assertEquals(507, failed.statusCode(), failed.bodyAsString());
          assertTrue(failed.bodyAsString().startsWith("OUT_OF_MEMORY"), failed.bodyAsString());
        });
        return web.post(port, "localhost", "/gemm").sendJsonObject(body);
      })
      .compose(ok -> {
        test.verify(() -> assertEquals(new JsonArray("[6.0]"), ok.bodyAsJsonObject().getJsonArray("c")));
        return device.stats();
      })
      .onComplete(test.succeeding(stats -> test.verify(() -> {
        assertBaseline(stats);
        test.completeNow();
      })));
  }

  private void assertBaseline(DeviceStats stats) {
    assertEquals(baseline.getBytesAllocated(), stats.getBytesAllocated());
    assertEquals(baseline.getBuffersAllocated(), stats.getBuffersAllocated());
    assertEquals(0, stats.getInFlight());
  }
}
