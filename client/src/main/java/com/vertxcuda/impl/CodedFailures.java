package com.vertxcuda.impl;

import com.vertxcuda.FailureCode;
import com.vertxcuda.internal.CodedFailure;

/**
 * What {@link com.vertxcuda.Failures} reads of a backend's {@link CodedFailure}, so that the API
 * package names no type of the client's internals.
 */
public final class CodedFailures {

  private CodedFailures() {
  }

  /** Whether {@code t} already knows its code. */
  public static boolean isCoded(Throwable t) {
    return t instanceof CodedFailure;
  }

  /** The code of a failure {@link #isCoded}. */
  public static FailureCode code(Throwable t) {
    return ((CodedFailure) t).code();
  }

  /** Whether a failure {@link #isCoded} poisons the context for good. */
  public static boolean isSticky(Throwable t) {
    return ((CodedFailure) t).isSticky();
  }
}
