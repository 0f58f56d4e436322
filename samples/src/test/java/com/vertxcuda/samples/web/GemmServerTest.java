package com.vertxcuda.samples.web;

import com.vertxcuda.DeviceClient;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.DeviceStats;
import com.vertxcuda.message.FaultRequest;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The web sample over real HTTP against the host backend, two instances on one port: products
 * checked against the CPU, the echo endpoint, 400s, a typed failure, and every device buffer freed
 * once the servers stop.
 */
@ExtendWith(VertxExtension.class)
class GemmServerTest {

  private WebClient web;
  private int port;
  private DeviceClient device;
  private DeviceStats baseline;
  private String deployment;

  @BeforeEach
  void deploy(Vertx vertx, VertxTestContext test) {
    DeviceVerticle verticle = new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.HOST).setFaultInjection(true));
    web = WebClient.create(vertx);
    device = DeviceClient.create(vertx);
    vertx.deployVerticle(verticle)
      .compose(id -> device.stats())
      .compose(stats -> {
        baseline = stats;
        return GemmServer.deploy(vertx, new GemmServerOptions().setPort(-1).setEcho(true).setMaxN(256), verticle, 2);
      })
      .onComplete(test.succeeding(servers -> {
        port = servers.get(0).actualPort();
        assertEquals(port, servers.get(1).actualPort(), "the instances share one port");
        deployment = servers.get(0).deploymentID();
        test.completeNow();
      }));
  }

  @Test
  void multipliesJsonAndRawMatricesAndFreesEverything(Vertx vertx, VertxTestContext test) {
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
      return octets("/gemm", 2, raw);
    }).compose(bytes -> {
      test.verify(() -> {
        assertEquals(200, bytes.statusCode());
        assertEquals("application/octet-stream", bytes.getHeader("content-type"));
        Buffer c = bytes.bodyAsBuffer();
        assertEquals(16, c.length());
        assertEquals(19f, c.getFloatLE(0));
        assertEquals(22f, c.getFloatLE(4));
        assertEquals(43f, c.getFloatLE(8));
        assertEquals(50f, c.getFloatLE(12));
      });
      return undeployAndStats(vertx);
    }).onComplete(test.succeeding(stats -> test.verify(() -> {
      assertBaseline(stats);
      test.completeNow();
    })));
  }

  /** Several n, each twice and several at once (buffers kept per n and reused), against the CPU's product. */
  @Test
  void productsOfSeveralSizesMatchTheCpu(Vertx vertx, VertxTestContext test) {
    List<Future<Void>> checks = new ArrayList<>();
    for (int n : new int[] {1, 3, 17, 64, 200, 64, 3}) {
      LoadBodies bodies = new LoadBodies(n, 3, 31L * n);
      for (int k = 0; k < bodies.bodies.size(); k++) {
        Buffer expected = bodies.products.get(k);
        Buffer echoed = bodies.echoes.get(k);
        checks.add(octets("/gemm", n, bodies.bodies.get(k)).map(r -> {
          test.verify(() -> {
            assertEquals(200, r.statusCode(), r.bodyAsString());
            assertEquals(expected, r.bodyAsBuffer(), "the product of n=" + n);
          });
          return null;
        }));
        checks.add(octets("/echo", n, bodies.bodies.get(k)).map(r -> {
          test.verify(() -> assertEquals(echoed, r.bodyAsBuffer(), "A's bytes for n=" + n));
          return null;
        }));
      }
    }
    Future.all(checks).compose(x -> undeployAndStats(vertx)).onComplete(test.succeeding(stats -> test.verify(() -> {
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
    Future<HttpResponse<Buffer>> rawTooShort = octets("/gemm", 2, Buffer.buffer(new byte[12]));
    Future<HttpResponse<Buffer>> rawTooLong = octets("/gemm", 2, Buffer.buffer(new byte[36]));
    Future<HttpResponse<Buffer>> tooLarge = octets("/gemm", 257, Buffer.buffer(new byte[8 * 257 * 257]));
    Future<HttpResponse<Buffer>> noN = web.post(port, "localhost", "/gemm")
      .putHeader("content-type", "application/octet-stream").sendBuffer(Buffer.buffer(new byte[32]));
    Future<HttpResponse<Buffer>> echoTooShort = octets("/echo", 2, Buffer.buffer(new byte[12]));
    Future.all(List.of(notJson, shortMatrix, notANumber, rawTooShort, rawTooLong, tooLarge, noN, echoTooShort)).compose(all -> {
      test.verify(() -> {
        for (int i = 0; i < all.size(); i++) {
          HttpResponse<Buffer> r = all.resultAt(i);
          assertEquals(400, r.statusCode(), r.bodyAsString());
        }
        assertTrue(shortMatrix.result().bodyAsString().contains("n*n = 4"), shortMatrix.result().bodyAsString());
        assertTrue(rawTooShort.result().bodyAsString().contains("holds 32 bytes"), rawTooShort.result().bodyAsString());
        assertTrue(tooLarge.result().bodyAsString().contains("between 1 and 256, not 257"), tooLarge.result().bodyAsString());
        assertTrue(noN.result().bodyAsString().contains("?n=N"), noN.result().bodyAsString());
      });
      return device.stats();
    }).onComplete(test.succeeding(stats -> test.verify(() -> {
      assertBaseline(stats);
      test.completeNow();
    })));
  }

  /** A JSON body longer than any of n <= maxN could be (2 n² numbers of 16 characters) is a 413, and the next is served. */
  @Test
  void anOversizedJsonBodyIs413(VertxTestContext test) {
    JsonObject small = new JsonObject().put("n", 1).put("a", new JsonArray("[2]")).put("b", new JsonArray("[3]"));
    web.post(port, "localhost", "/gemm").putHeader("content-type", "application/json")
      .sendBuffer(Buffer.buffer(new byte[2 * 256 * 256 * 16 + 1025]))
      .compose(tooLarge -> {
        test.verify(() -> assertEquals(413, tooLarge.statusCode(), tooLarge.bodyAsString()));
        return web.post(port, "localhost", "/gemm").sendJsonObject(small);
      })
      .onComplete(test.succeeding(ok -> test.verify(() -> {
        assertEquals(new JsonArray("[6.0]"), ok.bodyAsJsonObject().getJsonArray("c"));
        test.completeNow();
      })));
  }

  /** Without a Content-Length the length is checked once the body is in: too short or too long is a 400. */
  @Test
  void chunkedBodiesAreCheckedWhenRead(Vertx vertx, VertxTestContext test) {
    HttpClient client = vertx.createHttpClient();
    LoadBodies two = new LoadBodies(2, 1, 5);
    Future<Buffer> tooShort = chunked(client, Buffer.buffer(new byte[12]), 400);
    Future<Buffer> tooLong = chunked(client, Buffer.buffer(new byte[48]), 400);
    Future<Buffer> right = chunked(client, two.bodies.get(0), 200);
    Future.all(tooShort, tooLong, right).onComplete(test.succeeding(all -> test.verify(() -> {
      assertTrue(tooShort.result().toString().contains("not 12"), tooShort.result().toString());
      assertTrue(tooLong.result().toString().contains("not 48"), tooLong.result().toString());
      assertEquals(two.products.get(0), right.result());
      test.completeNow();
    })));
  }

  private Future<Buffer> chunked(HttpClient client, Buffer body, int status) {
    return client.request(HttpMethod.POST, port, "localhost", "/gemm?n=2")
      .compose(req -> req.setChunked(true).putHeader("content-type", "application/octet-stream").send(body))
      .compose(resp -> resp.body().map(b -> {
        assertEquals(status, resp.statusCode(), b.toString());
        return b;
      }));
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
          assertEquals(null, failed.getHeader("retry-after"));
        });
        return web.post(port, "localhost", "/gemm").sendJsonObject(body);
      })
      .compose(ok -> {
        test.verify(() -> assertEquals(new JsonArray("[6.0]"), ok.bodyAsJsonObject().getJsonArray("c")));
        return undeployAndStats(vertx);
      })
      .onComplete(test.succeeding(stats -> test.verify(() -> {
        assertBaseline(stats);
        test.completeNow();
      })));
  }

  private Future<HttpResponse<Buffer>> octets(String path, int n, Buffer body) {
    return web.post(port, "localhost", path).addQueryParam("n", Integer.toString(n))
      .putHeader("content-type", "application/octet-stream").sendBuffer(body);
  }

  // The servers keep their device buffers for the next request; stopped, they free them all.
  private Future<DeviceStats> undeployAndStats(Vertx vertx) {
    return vertx.undeploy(deployment).compose(x -> device.stats());
  }

  private void assertBaseline(DeviceStats stats) {
    assertEquals(baseline.getBytesAllocated(), stats.getBytesAllocated());
    assertEquals(baseline.getBuffersAllocated(), stats.getBuffersAllocated());
    assertEquals(0, stats.getInFlight());
  }
}
