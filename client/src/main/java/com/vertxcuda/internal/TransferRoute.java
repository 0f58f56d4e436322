package com.vertxcuda.internal;

import io.vertx.core.Context;
import io.vertx.core.Future;

/**
 * Where a transfer's pieces go ({@link ChunkedTransfer}) and in whose order: a typed client's
 * {@link RequestSender}, or a device's own pump for the large uploads and downloads that reach it
 * over the event bus.
 */
public interface TransferRoute {

  /**
   * Sends one piece at once, outside the caller's order (the transfer holds its place there); the
   * future completes on {@code caller}, never on this stack.
   */
  <R> Future<R> dispatch(Object body, Context caller, CallerOrder order);

  /** Takes a place in {@code order} for {@code hold}, as {@link CallerOrder#hold} does. */
  void hold(CallerOrder order, Context caller, boolean anyThread, CallerOrder.Hold hold);

  /** Where the transfer's future completes. */
  Context callerContext();

  /** The order the transfer takes its place in. */
  CallerOrder order();

  /** Whether the device is on another node. */
  boolean remote();

  /** What the device lends when it is served in this JVM; null when it is reached over the event bus. */
  TransferMemory lent();
}
