package com.vertxcuda;

import io.vertx.core.json.JsonObject;

/**
 * One request of work timed with {@link Timed#measure}: which operation went to which device, how
 * it ended, and where the device says its time went.
 *
 * @param operation the request's operation, as spans and timers name it ({@code "gemm"}, {@code "upload"})
 * @param device the address it was sent to (the device's, or one of its libraries')
 * @param failure its failure code; null when it succeeded
 * @param phases where its time went on the device; null when the device could not say (a request
 *   refused before the device admitted it, or one to a device whose node runs a version without them)
 */
public record RequestTiming(String operation, String device, FailureCode failure, RequestPhases phases) {

  public JsonObject toJson() {
    return new JsonObject().put("operation", operation).put("device", device)
      .put("failure", failure == null ? null : failure.name())
      .put("phases", phases == null ? null : phases.toJson());
  }
}
