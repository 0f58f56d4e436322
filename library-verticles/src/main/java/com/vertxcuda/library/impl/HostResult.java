package com.vertxcuda.library.impl;

import com.vertxcuda.Failures;

import java.util.function.DoubleSupplier;

/** The result of work run on a host-backend stream: its value, or what it threw. */
public final class HostResult implements EngineResult {

  private volatile double value;
  private volatile Throwable failure;

  /** Wraps {@code work} so that its value or failure lands here. */
  public Runnable capture(DoubleSupplier work) {
    return () -> {
      try {
        value = work.getAsDouble();
      } catch (RuntimeException | Error e) {
        failure = e;
      }
    };
  }

  @Override
  public double value() {
    Throwable t = failure;
    if (t != null) {
      throw Failures.toCudaException("the host engine failed", t);
    }
    return value;
  }
}
