package com.vertxcuda;

/**
 * Why a request failed. The numeric code travels as the {@link io.vertx.core.eventbus.ReplyException}
 * failure code; {@link Failures} is the one place that maps between the two.
 */
public enum FailureCode {
  /** The request is malformed: a field, shape, dtype or range is wrong. The message names it. */
  BAD_REQUEST(400),
  /** The handle's token does not match the buffer: the caller does not own it. */
  FORBIDDEN(403),
  /** No buffer (or module) with that id exists on this context, or it was freed. */
  NOT_FOUND(404),
  /** The handle was issued by an earlier context generation that no longer exists. */
  STALE_HANDLE(410),
  /** The device's pending queue is full; retry later. */
  QUEUE_FULL(429),
  /** The backend library reported an error for this request only; the device is healthy. */
  LIBRARY_ERROR(500),
  /** The operation is not available on this backend or device. */
  UNSUPPORTED(501),
  /** The context serving the request was lost (poisoned, crashed, stopped) or the device is LOST. */
  CONTEXT_LOST(503),
  /** No reply came within the request timeout. */
  TIMEOUT(504),
  /** Device memory (or the configured memory limit) cannot hold the allocation. */
  OUT_OF_MEMORY(507);

  private final int code;

  FailureCode(int code) {
    this.code = code;
  }

  /** The numeric failure code carried by the reply. */
  public int code() {
    return code;
  }

  /** The enum for a numeric failure code, or {@code null} if the code is not one of ours. */
  public static FailureCode fromCode(int code) {
    for (FailureCode c : values()) {
      if (c.code == code) {
        return c;
      }
    }
    return null;
  }
}
