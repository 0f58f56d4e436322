package com.vertxcuda.internal;

import com.vertxcuda.FailureCode;

/**
 * A failure that already knows its code: what a backend's native-status table decided (a CUresult,
 * a library status, the host backend's own limits). {@link com.vertxcuda.Failures} reads it as data;
 * nothing matches on its message.
 */
public interface CodedFailure {

  /** The code this failure stands for. */
  FailureCode code();

  /** Whether it poisons the context for good (read as CONTEXT_LOST). */
  boolean isSticky();
}
