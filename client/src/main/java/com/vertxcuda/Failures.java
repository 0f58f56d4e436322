package com.vertxcuda;

import com.vertxcuda.impl.CodedFailures;
import io.vertx.core.eventbus.ReplyException;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * The one place that maps failures to {@link FailureCode}s: exceptions of any kind (a backend's own
 * codes arrive as {@code CodedFailure}s, read through {@link CodedFailures}), {@link ReplyException}s and numeric codes from the wire. (Answering a request is the device's business, not a client's: the
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
   * Turns any failure into a {@link CudaException}. In this order:
   * <ul>
   *   <li>heap or direct-memory exhaustion ({@link OutOfMemoryError}) anywhere in the cause chain —
   *   also when it was thrown on another thread and surfaced wrapped — is OUT_OF_MEMORY;</li>
   *   <li>the first {@link CudaException} in the chain keeps its code;</li>
   *   <li>the first {@code CodedFailure} in the chain (a backend's status table) keeps its code; a
   *   sticky one reads CONTEXT_LOST;</li>
   *   <li>event-bus answers: a reply timeout is TIMEOUT, no handler or a request discarded while its
   *   consumer was unregistered is CONTEXT_LOST, our own numeric codes come back as their enum;</li>
   *   <li>argument errors and exact-arithmetic overflow (a size check) are BAD_REQUEST;</li>
   *   <li>anything else is LIBRARY_ERROR with the cause's message.</li>
   * </ul>
   */
  public static CudaException toCudaException(Throwable t) {
    Throwable oom = find(t, OutOfMemoryError.class);
    if (oom != null) {
      return new CudaException(FailureCode.OUT_OF_MEMORY, "the host ran out of memory: " + oom.getMessage(), t);
    }
    for (Throwable c = t; c != null; c = next(c)) {
      if (c instanceof CudaException) {
        return (CudaException) c;
      }
      if (CodedFailures.isCoded(c)) {
        return new CudaException(CodedFailures.isSticky(c) ? FailureCode.CONTEXT_LOST : CodedFailures.code(c),
          String.valueOf(c.getMessage()), c);
      }
      if (c instanceof ReplyException) {
        return fromReply((ReplyException) c);
      }
    }
    Throwable c = unwrap(t);
    if (c instanceof IllegalArgumentException) {
      return new CudaException(FailureCode.BAD_REQUEST, String.valueOf(c.getMessage()), c);
    }
    if (c instanceof ArithmeticException) {
      // Only the checks do exact arithmetic on a request's numbers: the request is malformed.
      return new CudaException(FailureCode.BAD_REQUEST, "a size, stride or distance of the request overflows: "
        + c.getMessage(), c);
    }
    return new CudaException(FailureCode.LIBRARY_ERROR, c.getMessage() != null ? c.getMessage() : String.valueOf(c), c);
  }

  /**
   * As {@link #toCudaException(Throwable)}, the message prefixed with what was being done
   * ({@code "the host engine failed"}), unless the failure already was a {@link CudaException}.
   */
  public static CudaException toCudaException(String doing, Throwable t) {
    CudaException e = toCudaException(t);
    if (e == t || find(t, CudaException.class) == e) {
      return e;
    }
    return new CudaException(e.code(), doing + ": " + text(e), e.getCause());
  }

  /** The failure a numeric code and text stand for (a reply frame); LIBRARY_ERROR when not one of ours. */
  public static CudaException fromCode(int code, String text) {
    FailureCode c = FailureCode.fromCode(code);
    return c != null ? new CudaException(c, strip(c, text)) : new CudaException(FailureCode.LIBRARY_ERROR, String.valueOf(text));
  }

  /**
   * The message of the sticky backend failure in {@code t}'s cause chain, or null when there is none:
   * the context tier poisons its context with it before answering CONTEXT_LOST.
   */
  public static String stickyCause(Throwable t) {
    if (find(t, OutOfMemoryError.class) != null) {
      return null;
    }
    for (Throwable c = t; c != null; c = next(c)) {
      if (c instanceof CudaException || c instanceof ReplyException) {
        return null;
      }
      if (CodedFailures.isCoded(c)) {
        return CodedFailures.isSticky(c) ? String.valueOf(c.getMessage()) : null;
      }
    }
    return null;
  }

  private static CudaException fromReply(ReplyException re) {
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

  // The cause chain, bounded against a cycle.
  private static Throwable next(Throwable c) {
    Throwable n = c.getCause();
    return n == c ? null : n;
  }

  private static Throwable find(Throwable t, Class<? extends Throwable> type) {
    int depth = 0;
    for (Throwable c = t; c != null && depth < 32; c = next(c), depth++) {
      if (type.isInstance(c)) {
        return c;
      }
    }
    return null;
  }

  // What a wrapper from another thread or a reflective call stands for.
  private static Throwable unwrap(Throwable t) {
    Throwable c = t;
    while ((c instanceof CompletionException || c instanceof ExecutionException
      || c instanceof InvocationTargetException || c instanceof UndeclaredThrowableException)
      && c.getCause() != null && c.getCause() != c) {
      c = c.getCause();
    }
    return c;
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
