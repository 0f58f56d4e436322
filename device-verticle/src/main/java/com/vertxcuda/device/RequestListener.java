package com.vertxcuda.device;

import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.RequestPhases;

/**
 * Hears each client request a device answers, for metrics (vertx-cuda-observability's
 * {@code DeviceRequestTimer} records a latency histogram with it). Set it with
 * {@link DeviceVerticle#setRequestListener} before deploying the device.
 *
 * <p>It is called on the thread that answers (a completion thread, the event loop, a timeout
 * sweep), once per request, on the request path: it must be cheap, must not block and must not
 * throw. The device's own requests (stats refresh, reclaim) are not reported.
 */
@FunctionalInterface
public interface RequestListener {

  /**
   * @param address the device's address
   * @param library the library that served it, or null for the device's own memory requests
   * @param code the failure, or null when it succeeded
   * @param nanos from admission to the answer
   */
  void answered(String address, Library library, FailureCode code, long nanos);

  /**
   * Whether this listener wants each request's phases ({@link #phases}): the device then measures
   * them (timed markers around each request's work, a clock read when the submission thread takes it).
   */
  default boolean wantsPhases() {
    return false;
  }

  /**
   * Where an answered request's time went, after {@link #answered}, while the device measures phases.
   *
   * @param address the device's address
   * @param library the library that served it, or null for the device's own memory requests
   * @param body the request (its operation: {@code RequestTrace.operation(body)})
   * @param code the failure, or null when it succeeded
   * @param phases its phases, in ns
   */
  default void phases(String address, Library library, Object body, FailureCode code, RequestPhases phases) {
  }
}
