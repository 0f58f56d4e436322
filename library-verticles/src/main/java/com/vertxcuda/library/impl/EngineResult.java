package com.vertxcuda.library.impl;

/**
 * What an engine's queued work produced, read once the work has completed: a scalar where the
 * routine has one, and on the host backend the failure of the work itself (thrown from
 * {@link #value()}, so the reply carries it instead of wrong data).
 */
public interface EngineResult {

  /** The scalar result (0 where there is none); throws if the work failed. */
  double value();

  /** The imaginary part of a complex scalar result (a complex dot); 0 where there is none. Read after {@link #value()}. */
  default double imaginary() {
    return 0;
  }
}
