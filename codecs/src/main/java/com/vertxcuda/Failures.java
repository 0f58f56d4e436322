package com.vertxcuda;

import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;

/**
 * The one place that maps failures between {@link FailureCode}s, {@link ReplyException}s and
 * {@link CudaException}s. (Answering a request is the device's business, not a client's: the
 * device answers a failure as {@code message.fail(code.code(), text(e))}.)
 */
public final class Failures {

  /** How Vert.x 5 words its answer to a request its consumer discarded on unregistering. */
  static final String DISCARDED = "Discarded the request.";

  private Failures() {
  }

  /** The failure code that {@code t} stands for. */
  public static FailureCode codeOf(Throwable t) {
    return toCudaException(t).code();
  }

  /**
   * Turns any failure into a {@link CudaException}: our own codes come back as their enum,
   * event-bus timeouts as TIMEOUT, argument and size-overflow errors as BAD_REQUEST, a missing recipient (none registered, or one that discarded the
   * request while it was being unregistered) as CONTEXT_LOST, and anything else as LIBRARY_ERROR.
   */
  public static CudaException toCudaException(Throwable t) {
    if (t instanceof CudaException) {
      return (CudaException) t;
    }
    if (t instanceof ReplyException) {
      ReplyException re = (ReplyException) t;
      switch (re.failureType()) {
        case TIMEOUT:
          if (re.getMessage() != null && re.getMessage().startsWith(DISCARDED)) {
            // Vert.x answers a request that reached a consumer as it was unregistered (the device
            // undeployed) with a TIMEOUT at once: it was never served, the device is gone.
            return new CudaException(FailureCode.CONTEXT_LOST,
              "the device stopped serving this address while the request was on its way: " + re.getMessage(), re);
          }
          return new CudaException(FailureCode.TIMEOUT, String.valueOf(re.getMessage()), re);
        case NO_HANDLERS:
          return new CudaException(FailureCode.CONTEXT_LOST,
            "no device serves this address: " + re.getMessage(), re);
        case ERROR:
          return new CudaException(FailureCode.LIBRARY_ERROR, String.valueOf(re.getMessage()), re);
        default:
          FailureCode code = FailureCode.fromCode(re.failureCode());
          if (code != null) {
            return new CudaException(code, strip(code, re.getMessage()), re);
          }
          return new CudaException(FailureCode.LIBRARY_ERROR, String.valueOf(re.getMessage()), re);
      }
    }
    if (t instanceof IllegalArgumentException) {
      return new CudaException(FailureCode.BAD_REQUEST, String.valueOf(t.getMessage()), t);
    }
    if (t instanceof ArithmeticException) {
      // A size computed from a request's numbers overflowed: the request is malformed.
      return new CudaException(FailureCode.BAD_REQUEST, "a size overflows: " + t.getMessage(), t);
    }
    return new CudaException(FailureCode.LIBRARY_ERROR, String.valueOf(t), t);
  }

  /** A failure's message without the "CODE: " prefix its exception adds (the text a reply carries). */
  public static String text(CudaException e) {
    return strip(e.code(), e.getMessage());
  }

  private static String strip(FailureCode code, String text) {
    String prefix = code + ": ";
    if (text != null && text.startsWith(prefix)) {
      return text.substring(prefix.length());
    }
    return String.valueOf(text);
  }
}
