package com.vertxcuda.impl;

import com.vertxcuda.Failures;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;

/** Sends typed requests to one address and turns failures into {@link com.vertxcuda.CudaException}s. */
public final class RequestSender {

  private final Vertx vertx;
  private final String address;
  private final DeliveryOptions options;

  public RequestSender(Vertx vertx, String address, long timeoutMillis) {
    this.vertx = vertx;
    this.address = address;
    this.options = new DeliveryOptions().setSendTimeout(timeoutMillis);
  }

  public Vertx vertx() {
    return vertx;
  }

  public String address() {
    return address;
  }

  public <R> Future<R> request(Object body) {
    return vertx.eventBus().<R>request(address, body, options)
      .map(Message::body)
      .recover(t -> Future.failedFuture(Failures.toCudaException(t)));
  }
}
