package com.vertxcuda.observability;

import com.vertxcuda.observability.impl.ObservabilityEndpointImpl;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.healthchecks.HealthChecks;

/**
 * A small HTTP server for scrapers and probes: {@code GET /metrics} answers the Prometheus text
 * format of {@code registry}; {@code GET /health} answers the health checks' JSON with 200 when
 * every procedure is UP and 503 otherwise. Anything else is 404.
 */
public interface ObservabilityEndpoint {

  /** Listens on {@code port} (0: any free port; the server says which). {@code checks} may be null: no /health. */
  static Future<HttpServer> listen(Vertx vertx, int port, PrometheusMeterRegistry registry, HealthChecks checks) {
    return ObservabilityEndpointImpl.listen(vertx, port, registry, checks);
  }
}
