package com.vertxcuda.bench.web;

import com.vertxcuda.bench.result.Series;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A closed-loop HTTP client: {@code connections} loops, each on an event loop of the client's
 * Vert.x, each sending its next request when the one before is answered, with prebuilt bodies.
 * Every answer is checked byte for byte against the one expected for its body (so a wrong product,
 * or another request's, counts); anything but a 200 is an error. Requests answered during the
 * measured window (after the warm-up) give the rate and the latencies (HdrHistogram, from the send
 * to the last byte of the answer).
 */
final class LoadClient implements AutoCloseable {

  /** What one endpoint at one n did: the rate and latencies of the window; answers checked over the whole run. */
  record Result(String endpoint, int n, int connections, long answered, long measured, double seconds,
                Histogram latency, long errors, long wrong, Map<String, Long> errorKinds, String firstError) {

    double rate() {
      return measured / seconds;
    }

    JsonObject toJson() {
      JsonObject kinds = new JsonObject();
      errorKinds.forEach(kinds::put);
      return new JsonObject().put("endpoint", endpoint).put("n", n).put("connections", connections)
        .put("answered", answered).put("measured", measured).put("seconds", round(seconds))
        .put("requestsPerSecond", round(rate())).put("latencyMs", latencyMs(latency))
        .put("errors", errors).put("wrongAnswers", wrong).put("errorKinds", kinds)
        .put("firstError", firstError);
    }
  }

  private final Vertx vertx;
  private final HttpClientAgent client;
  private final int connections;

  /** A client with a pool of {@code connections} HTTP/1.1 connections, on {@code vertx} (its own, ideally). */
  LoadClient(Vertx vertx, int connections) {
    this.vertx = vertx;
    this.connections = connections;
    this.client = vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true).setTcpNoDelay(true),
      new PoolOptions().setHttp1MaxSize(connections));
  }

  /**
   * Posts {@code bodies} (in turn) to {@code 127.0.0.1:port}{@code uri}, for {@code warmupNanos}
   * and then {@code measureNanos}, and expects {@code expected.get(i)} for {@code bodies.get(i)}.
   */
  Future<Result> run(int port, String endpoint, int n, List<Buffer> bodies, List<Buffer> expected, long warmupNanos,
                     long measureNanos) {
    long start = System.nanoTime();
    Window window = new Window(start + warmupNanos, start + warmupNanos + measureNanos);
    RequestOptions request = new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1").setPort(port)
      .setURI("/" + endpoint + "?n=" + n).putHeader("content-type", "application/octet-stream");
    List<Future<Loop>> loops = new ArrayList<>();
    for (int i = 0; i < connections; i++) {
      Loop loop = new Loop(i, request, bodies, expected, window);
      Context context = vertx.getOrCreateContext();
      Promise<Loop> done = Promise.promise();
      context.runOnContext(v -> loop.next(done));
      loops.add(done.future());
    }
    return Future.all(loops).map(all -> {
      Histogram latency = new Histogram(3);
      long answered = 0;
      long measured = 0;
      long errors = 0;
      long wrong = 0;
      Map<String, Long> kinds = new TreeMap<>();
      String first = null;
      for (int i = 0; i < all.size(); i++) {
        Loop l = all.resultAt(i);
        latency.add(l.latency);
        answered += l.answered;
        measured += l.measured;
        errors += l.errors;
        wrong += l.wrong;
        l.kinds.forEach((k, v) -> kinds.merge(k, v, Long::sum));
        first = first != null ? first : l.firstError;
      }
      return new Result(endpoint, n, connections, answered, measured, measureNanos / 1e9, latency, errors, wrong,
        kinds, first);
    });
  }

  @Override
  public void close() {
    client.close();
  }

  private record Window(long from, long to) {
  }

  /** One connection's loop; its fields are used on its own context only. */
  private final class Loop {
    final int id;
    final RequestOptions request;
    final List<Buffer> bodies;
    final List<Buffer> expected;
    final Window window;
    final Histogram latency = new Histogram(3);
    final Map<String, Long> kinds = new TreeMap<>();
    long sent;
    long answered;
    long measured;
    long errors;
    long wrong;
    String firstError;

    Loop(int id, RequestOptions request, List<Buffer> bodies, List<Buffer> expected, Window window) {
      this.id = id;
      this.request = request;
      this.bodies = bodies;
      this.expected = expected;
      this.window = window;
    }

    void next(Promise<Loop> done) {
      int which = (int) ((id + sent++) % bodies.size());
      long t0 = System.nanoTime();
      client.request(request)
        .compose(req -> req.send(bodies.get(which)))
        .compose(resp -> resp.body().map(body -> {
          if (resp.statusCode() != 200) {
            error("HTTP " + resp.statusCode(), "HTTP " + resp.statusCode() + ": " + body.toString().trim());
          } else if (!body.equals(expected.get(which))) {
            wrong++;
            if (firstError == null) {
              firstError = "wrong answer to body " + which + " (" + body.length() + " bytes)";
            }
          }
          return body;
        }))
        .onComplete(ar -> {
          long t = System.nanoTime();
          answered++;
          if (ar.failed()) {
            error(ar.cause().getClass().getSimpleName(), String.valueOf(ar.cause()));
          }
          if (t >= window.from && t <= window.to) {
            measured++;
            latency.recordValue(Math.max(1, t - t0));
          }
          if (t < window.to && ar.failed()) {
            context().runOnContext(v -> next(done)); // not deeper into this stack
          } else if (t < window.to) {
            next(done);
          } else {
            done.complete(this);
          }
        });
    }

    private Context context() {
      return vertx.getOrCreateContext();
    }

    private void error(String kind, String message) {
      errors++;
      kinds.merge(kind, 1L, Long::sum);
      if (firstError == null) {
        firstError = message;
      }
    }
  }

  static JsonObject latencyMs(Histogram h) {
    return new JsonObject().put("p50", round(h.getValueAtPercentile(50) / 1e6))
      .put("p90", round(h.getValueAtPercentile(90) / 1e6)).put("p99", round(h.getValueAtPercentile(99) / 1e6))
      .put("p999", round(h.getValueAtPercentile(99.9) / 1e6)).put("mean", round(h.getMean() / 1e6))
      .put("max", round(h.getMaxValue() / 1e6));
  }

  static double round(double v) {
    return Series.round(v);
  }
}
