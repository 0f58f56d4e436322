package com.vertxcuda.internal;

import com.vertxcuda.FailureCode;
import com.vertxcuda.RequestPhases;

/** What a request's span ends with ({@link RequestTrace#OUTCOME_TAGS}): its failure code, if any, and its phases, where measured. */
public interface SpanOutcome {

  /** The failure code; null when it succeeded. */
  FailureCode failure();

  /** Where its time went; null when not measured. */
  RequestPhases phases();
}
