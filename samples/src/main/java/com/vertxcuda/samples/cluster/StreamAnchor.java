package com.vertxcuda.samples.cluster;

import com.vertxcuda.internal.VertxInternals;
import io.netty.buffer.Unpooled;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;

import java.nio.ByteBuffer;

/**
 * A yardstick for bulk transfers between two JVMs: a plain Vert.x {@code NetServer} on the event bus's
 * host (TLS when the bus is, with its key and trust stores) that takes a stream of n bytes and
 * answers one byte ({@code 'U'}), or sends n bytes ({@code 'D'}); and the {@code NetClient} that
 * times it. The stream is written from one reused 4 MiB direct buffer, four writes on their way. What
 * the toolkit's side channel does over the same two JVMs is measured against it (the bench module's
 * {@code ClusterBench}). It sits beside {@link GpuNode}, whose {@code --echo} serves it.
 */
public final class StreamAnchor {

  /** Where a {@code --echo} node answers with its sink's address ({@code host:port}). */
  public static final String ADDRESS = "vertx-cuda-bench.sink";
  private static final int CHUNK = 4 << 20;

  private StreamAnchor() {
  }

  /** Starts the sink on {@code vertx}; completes with its address. */
  public static Future<String> serve(Vertx vertx) {
    EventBusOptions bus = VertxInternals.eventBusOptions(vertx);
    String host = bus.getHost() != null ? bus.getHost() : "127.0.0.1";
    Buffer chunk = direct();
    return vertx.createNetServer(new NetServerOptions(bus.toJson()).setHost(host).setPort(0)).connectHandler(s -> {
      long[] header = {-1, 0};
      Buffer first = Buffer.buffer();
      s.handler(b -> {
        if (header[0] < 0) {
          first.appendBuffer(b);
          if (first.length() < 9) {
            return;
          }
          header[0] = first.getByte(0);
          header[1] = first.getLong(1);
          if (header[0] == 'D') {
            pump(s, chunk, header[1]).onComplete(v -> { });
            return;
          }
          b = first.slice(9, first.length());
        }
        header[1] -= b.length();
        if (header[1] == 0) {
          s.write(Buffer.buffer(new byte[] {1}));
        }
      });
    }).listen().map(server -> host + ":" + server.actualPort());
  }

  /** Seconds to send ({@code upload}) or receive {@code bytes} over a new connection to {@code address}. */
  public static Future<Double> time(Vertx vertx, String address, boolean upload, long bytes) {
    EventBusOptions bus = VertxInternals.eventBusOptions(vertx);
    NetClient client = vertx.createNetClient(new NetClientOptions(bus.toJson()).setHostnameVerificationAlgorithm(""));
    int colon = address.lastIndexOf(':');
    Promise<Double> done = Promise.promise();
    Buffer chunk = direct();
    client.connect(Integer.parseInt(address.substring(colon + 1)), address.substring(0, colon)).onComplete(c -> {
      if (c.failed()) {
        done.fail(c.cause());
        return;
      }
      NetSocket s = c.result();
      long t0 = System.nanoTime();
      long[] left = {bytes};
      Runnable finish = () -> {
        done.tryComplete((System.nanoTime() - t0) / 1e9);
        s.close();
      };
      // An upload ends with the sink's one byte; a download with its last byte.
      s.handler(b -> {
        left[0] -= b.length();
        if (upload || left[0] <= 0) {
          finish.run();
        }
      });
      s.write(Buffer.buffer(9).appendByte((byte) (upload ? 'U' : 'D')).appendLong(bytes));
      if (upload) {
        pump(s, chunk, bytes);
      }
    });
    return done.future().eventually(client::close);
  }

  // Writes n bytes of chunk, again and again, at most four writes on their way (as the side channel
  // does): pacing by the write queue alone let one task encrypt a whole GiB over TLS.
  private static Future<Void> pump(NetSocket s, Buffer chunk, long n) {
    Promise<Void> p = Promise.promise();
    long[] left = {n, 0};
    Runnable[] more = new Runnable[1];
    more[0] = () -> {
      while (left[0] > 0 && left[1] < 4) {
        int k = (int) Math.min(chunk.length(), left[0]);
        left[0] -= k;
        left[1]++;
        s.write(k == chunk.length() ? chunk : chunk.slice(0, k)).onComplete(w -> {
          left[1]--;
          if (w.failed()) {
            p.tryFail(w.cause());
          } else if (left[0] > 0) {
            more[0].run();
          } else if (left[1] == 0) {
            p.tryComplete();
          }
        });
      }
    };
    more[0].run();
    return p.future();
  }

  private static Buffer direct() {
    return VertxInternals.buffer(Unpooled.wrappedBuffer(ByteBuffer.allocateDirect(CHUNK)));
  }
}
