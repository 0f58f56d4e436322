package com.vertxcuda.samples.web;

import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client that stops sending its body part-way is answered 408 and its connection closed once the
 * body idle timeout passes, and gives back what it held: with one request in flight allowed, the next
 * request is served, and the transfer memory its body was read into is back with the device.
 */
@ExtendWith(VertxExtension.class)
@Tag("alone")
class GemmServerBodyTimeoutTest {

  private static final LoadBodies BODIES = new LoadBodies(4, 1, 7);
  private static final long IDLE_MS = 300;
  /** The whole body's limit: a sender that trickles a byte every 100 ms passes it, never the idle timeout. */
  private static final long TOTAL_MS = 1_500;
  /** How long after the last byte the answer may take: the timeout, and room for a loaded CI host. */
  private static final long BOUND_MS = IDLE_MS + 2_000;

  private DeviceVerticle device;
  private int port;
  /**
   * This device's transfer charge once deployed: what a body's buffers must give back to. The JVM's pool
   * ({@code heldTransferBytes}) is shared with every class this test JVM ran, whose unreachable buffers
   * return whenever they are collected.
   */
  private long chargedBefore;
  // Held for the test: a client no longer referenced is closed when collected, its connections too.
  private NetClient raw;
  private WebClient web;

  @BeforeEach
  void deploy(Vertx vertx, VertxTestContext test) {
    raw = vertx.createNetClient();
    web = WebClient.create(vertx);
    device = new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.HOST));
    vertx.deployVerticle(device)
      .compose(id -> GemmServer.deploy(vertx, new GemmServerOptions().setPort(-1).setMaxInFlight(1)
        .setBodyIdleTimeout(IDLE_MS).setBodyTimeout(TOTAL_MS), device, 1))
      .onComplete(test.succeeding(servers -> {
        port = servers.get(0).actualPort();
        chargedBefore = device.chargedTransferBytes();
        test.completeNow();
      }));
  }

  @Test
  void aStalledOctetBodyIs408AndGivesBackItsPlace(Vertx vertx, VertxTestContext test) {
    // n=4 is 128 bytes; 40 come, then nothing.
    String head = "POST /gemm?n=4 HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/octet-stream\r\n"
      + "content-length: 128\r\n\r\n";
    stall(vertx, Buffer.buffer(head).appendBuffer(BODIES.bodies.get(0).slice(0, 40)))
      .compose(answer -> {
        test.verify(() -> {
          assertTrue(answer.startsWith("HTTP/1.1 408"), answer);
          assertEquals(chargedBefore, device.chargedTransferBytes(), "the body's transfer memory is given back");
        });
        return post();
      })
      .onComplete(nextServed(test));
  }

  @Test
  void aStalledJsonBodyIs408(Vertx vertx, VertxTestContext test) {
    String head = "POST /gemm HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 60\r\n\r\n";
    stall(vertx, Buffer.buffer(head + "{\"n\": 1, \"a\": [2]"))
      .compose(answer -> {
        test.verify(() -> assertTrue(answer.startsWith("HTTP/1.1 408"), answer));
        return post();
      })
      .onComplete(nextServed(test));
  }

  /**
   * A sender that trickles one byte every 100 ms never trips the idle timeout, but its body is not
   * whole within the whole-body timeout: a 408 then, its place and memory given back for the next.
   */
  @Test
  void aTricklingOctetBodyIs408AfterTheWholeBodyTimeout(Vertx vertx, VertxTestContext test) {
    String head = "POST /gemm?n=4 HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/octet-stream\r\n"
      + "content-length: 128\r\n\r\n";
    Buffer body = BODIES.bodies.get(0);
    Promise<String> closed = Promise.promise();
    Buffer received = Buffer.buffer();
    long[] began = new long[1];
    raw.connect(port, "localhost").onSuccess(socket -> {
      socket.handler(received::appendBuffer);
      began[0] = System.nanoTime();
      socket.write(Buffer.buffer(head));
      int[] next = {0};
      long trickle = vertx.setPeriodic(100, id -> {
        if (next[0] < body.length()) {
          socket.write(body.slice(next[0], next[0] + 1));
          next[0]++;
        }
      });
      socket.closeHandler(v -> {
        vertx.cancelTimer(trickle);
        closed.tryComplete(received.toString());
      });
      vertx.setTimer(TOTAL_MS + BOUND_MS, id -> closed.tryFail(new AssertionError("no answer " + (TOTAL_MS + BOUND_MS)
        + " ms after the body began; the server wrote: \"" + received + "\"")));
    }).onFailure(closed::tryFail);
    closed.future()
      .compose(answer -> {
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began[0]);
        test.verify(() -> {
          assertTrue(answer.startsWith("HTTP/1.1 408"), answer);
          assertTrue(answer.contains("not whole"), answer);
          assertTrue(ms >= TOTAL_MS - 100, "answered " + ms + " ms after the body began, before the whole-body timeout");
          assertEquals(chargedBefore, device.chargedTransferBytes(), "the body's transfer memory is given back");
        });
        return post();
      })
      .onComplete(nextServed(test));
  }

  /** A body refused before it is read (n too large) is read and dropped; stalled, it too is a 408. */
  @Test
  void aStalledRefusedBodyIs408(Vertx vertx, VertxTestContext test) {
    String head = "POST /gemm?n=100000 HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/octet-stream\r\n"
      + "content-length: 64\r\n\r\n";
    stall(vertx, Buffer.buffer(head + "0123456789"))
      .onComplete(test.succeeding(answer -> test.verify(() -> {
        assertTrue(answer.startsWith("HTTP/1.1 408"), answer);
        test.completeNow();
      })));
  }

  /**
   * Over HTTP/2 (cleartext, prior knowledge) a stalled body ends its own stream with a 408, not the
   * connection: the next request on the same connection is served.
   */
  @Test
  void aStalledHttp2StreamIs408AndItsConnectionGoesOn(Vertx vertx, VertxTestContext test) {
    HttpClient h2 = vertx.createHttpClient(new HttpClientOptions().setProtocolVersion(HttpVersion.HTTP_2)
      .setHttp2ClearTextUpgrade(false).setDefaultPort(port).setDefaultHost("localhost"),
      new PoolOptions().setHttp2MaxSize(1));
    HttpConnection[] first = new HttpConnection[1];
    boolean[] closed = new boolean[1];
    h2.request(HttpMethod.POST, "/gemm?n=4").compose(req -> {
        first[0] = req.connection();
        first[0].closeHandler(v -> closed[0] = true);
        req.putHeader("content-type", "application/octet-stream").putHeader("content-length", "128");
        req.write(BODIES.bodies.get(0).slice(0, 40)); // then nothing
        return req.response();
      })
      .compose(stalled -> {
        test.verify(() -> {
          assertEquals(408, stalled.statusCode());
          // Checked here, not after the next request: its own buffers go back after its answer is written.
          assertEquals(chargedBefore, device.chargedTransferBytes(), "the stalled body's transfer memory is given back");
        });
        return h2.request(HttpMethod.POST, "/gemm?n=4").compose(req -> {
          test.verify(() -> assertTrue(req.connection() == first[0], "a new connection"));
          return req.putHeader("content-type", "application/octet-stream").send(BODIES.bodies.get(0));
        });
      })
      .compose(r -> r.body().map(body -> {
        test.verify(() -> {
          assertEquals(200, r.statusCode(), body.toString());
          assertEquals(BODIES.products.get(0), body);
          assertTrue(!closed[0], "the connection was closed");
        });
        return null;
      }))
      .onComplete(test.succeeding(x -> h2.close().onComplete(c -> test.completeNow())));
  }

  /** Sends {@code sent}, then nothing: what the server wrote before it closed the connection, within the bound. */
  private Future<String> stall(Vertx vertx, Buffer sent) {
    Promise<String> closed = Promise.promise();
    Buffer received = Buffer.buffer();
    long[] sentAt = new long[1];
    raw.connect(port, "localhost").onSuccess((NetSocket socket) -> {
      socket.handler(received::appendBuffer);
      socket.closeHandler(v -> {
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sentAt[0]);
        if (ms > BOUND_MS) {
          closed.tryFail(new AssertionError("closed " + ms + " ms after the last byte, past " + BOUND_MS + " ms"));
        } else {
          closed.tryComplete(received.toString());
        }
      });
      sentAt[0] = System.nanoTime();
      socket.write(sent);
      vertx.setTimer(BOUND_MS, id -> closed.tryFail(new AssertionError("no close " + BOUND_MS
        + " ms after the body stalled (body idle timeout " + IDLE_MS + " ms); the server wrote: \"" + received + "\"")));
    }).onFailure(closed::tryFail);
    return closed.future();
  }

  /** The request after a 408 is served whole: the stalled one gave back its place. */
  private static io.vertx.core.Handler<io.vertx.core.AsyncResult<HttpResponse<Buffer>>> nextServed(VertxTestContext test) {
    return test.succeeding(r -> test.verify(() -> {
      assertEquals(200, r.statusCode(), r.bodyAsString());
      assertEquals(BODIES.products.get(0), r.bodyAsBuffer());
      test.completeNow();
    }));
  }

  private Future<HttpResponse<Buffer>> post() {
    return web.post(port, "localhost", "/gemm").addQueryParam("n", "4")
      .putHeader("content-type", "application/octet-stream").sendBuffer(BODIES.bodies.get(0));
  }
}
