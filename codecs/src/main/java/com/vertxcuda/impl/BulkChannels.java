package com.vertxcuda.impl;

import com.vertxcuda.Addresses;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.message.DescribeRequest;
import com.vertxcuda.message.DeviceInfo;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;

import java.util.Map;
import java.util.WeakHashMap;

/**
 * Opens a stream to the bulk side channel ({@link BulkServer}) of a device's node: asks the device,
 * over the event bus, to describe itself — the answer names the channel ({@code DeviceInfo.bulkAddress})
 * and, given by the device's admission after every request the caller sent it before on the same bus
 * connection, is the barrier that puts the stream behind them — then connects with this Vert.x's one
 * side-channel client (the event bus's TLS settings, {@link BulkWire#clientOptions}).
 */
final class BulkChannels {

  private static final Map<Vertx, Future<NetClient>> CLIENTS = new WeakHashMap<>();

  private BulkChannels() {
  }

  /**
   * A new stream to the side channel of {@code sender}'s device's node, connected from {@code caller}
   * (so its events arrive there); the future completes there. Fails UNSUPPORTED where the node
   * advertises no channel, CONTEXT_LOST where it cannot be reached, and as the describe fails.
   */
  static Future<NetSocket> open(RequestSender sender, Context caller) {
    String node = Addresses.nodeOf(sender.address());
    return sender.<DeviceInfo>dispatch(new DescribeRequest(), caller).compose(info -> {
      String address = info.getBulkAddress();
      int colon = address == null ? -1 : address.lastIndexOf(':');
      int port;
      try {
        port = colon <= 0 ? -1 : Integer.parseInt(address.substring(colon + 1));
      } catch (NumberFormatException e) {
        port = -1;
      }
      if (port <= 0) {
        return Future.failedFuture(new CudaException(FailureCode.UNSUPPORTED, "node " + node
          + " serves no bulk channel" + (address == null ? "" : " at a usable address: " + address)));
      }
      String host = address.substring(0, colon);
      int at = port;
      Promise<NetSocket> connected = Promise.promise();
      client(sender.vertx()).onComplete(made -> caller.runOnContext(v -> {
        if (made.failed()) {
          connected.fail(made.cause());
          return;
        }
        made.result().connect(at, host).onComplete(c -> {
          if (c.failed()) {
            connected.fail(new CudaException(FailureCode.CONTEXT_LOST, "the bulk channel of node " + node + " at "
              + address + " cannot be reached: " + c.cause().getMessage()));
          } else {
            connected.complete(c.result());
          }
        });
      }));
      return connected.future();
    });
  }

  // This Vert.x's side-channel client, made once on a context of its own: one made on a verticle's
  // context would close when that verticle is undeployed.
  private static Future<NetClient> client(Vertx vertx) {
    synchronized (CLIENTS) {
      Future<NetClient> c = CLIENTS.get(vertx);
      if (c == null) {
        EventBusOptions bus = VertxInternals.eventBusOptions(vertx);
        if (bus == null) {
          return Future.failedFuture(new CudaException(FailureCode.UNSUPPORTED,
            "the bulk channel needs a clustered event bus whose options can be read"));
        }
        Promise<NetClient> made = Promise.promise();
        VertxInternals.newEventLoopContext(vertx).runOnContext(v -> made.complete(vertx.createNetClient(BulkWire.clientOptions(bus))));
        c = made.future();
        CLIENTS.put(vertx, c);
      }
      return c;
    }
  }
}
