package com.vertxcuda.observability.impl;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.healthchecks.HealthChecks;

/** The routes of ObservabilityEndpoint, on vertx-core's HTTP server (no router needed for two paths). */
public final class ObservabilityEndpointImpl {

  private ObservabilityEndpointImpl() {
  }

  public static Future<HttpServer> listen(Vertx vertx, int port, PrometheusMeterRegistry registry, HealthChecks checks) {
    return vertx.createHttpServer().requestHandler(req -> handle(vertx, req, registry, checks)).listen(port);
  }

  private static void handle(Vertx vertx, HttpServerRequest req, PrometheusMeterRegistry registry, HealthChecks checks) {
    if (req.method() != HttpMethod.GET) {
      req.response().setStatusCode(405).end();
    } else if (req.path().equals("/metrics")) {
      // Scraping walks every meter: off the event loop.
      vertx.executeBlocking(registry::scrape, false).onComplete(ar -> {
        if (ar.succeeded()) {
          req.response().putHeader("content-type", "text/plain; version=0.0.4; charset=utf-8").end(ar.result());
        } else {
          req.response().setStatusCode(500).end(String.valueOf(ar.cause()));
        }
      });
    } else if (req.path().equals("/health") && checks != null) {
      checks.checkStatus().onComplete(ar -> {
        if (ar.failed()) {
          req.response().setStatusCode(500).end(String.valueOf(ar.cause()));
          return;
        }
        req.response().setStatusCode(ar.result().getUp() ? 200 : 503)
          .putHeader("content-type", "application/json").end(ar.result().toJson().encode());
      });
    } else {
      req.response().setStatusCode(404).end();
    }
  }
}
