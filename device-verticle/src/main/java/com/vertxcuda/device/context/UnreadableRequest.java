package com.vertxcuda.device.context;

import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import io.vertx.core.eventbus.Message;

/**
 * A request whose body a device host could not read off the link (a list longer than its wire
 * format allows, say). It still goes to the verticle it was for, which answers BAD_REQUEST, so the
 * request uses up its sequence number like any other and the device host keeps serving. A device
 * host also sends one, with no one to answer, for a number its device verticle answered itself
 * (a request refused before it reached the link), so later requests need not wait for it.
 */
public record UnreadableRequest(String reason) {

  /** Answers {@code m} with BAD_REQUEST if its body is unreadable; true when it did. */
  public static boolean answer(Message<?> m) {
    if (m.body() instanceof UnreadableRequest) {
      Failures.fail(m, FailureCode.BAD_REQUEST, "the request cannot be read: " + ((UnreadableRequest) m.body()).reason());
      return true;
    }
    return false;
  }
}
