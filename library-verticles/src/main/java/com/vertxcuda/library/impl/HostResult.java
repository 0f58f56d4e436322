package com.vertxcuda.library.impl;

import com.vertxcuda.Failures;

import java.util.function.DoubleSupplier;
import java.util.function.Supplier;

/** The result of work run on a host-backend stream: its value, or what it threw. */
public final class HostResult implements EngineResult {

  private volatile double value;
  private volatile double imaginary;
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

  /** Wraps {@code work}, which answers a complex scalar as (real, imaginary), so that it lands here. */
  public Runnable captureComplex(Supplier<double[]> work) {
    return () -> {
      try {
        double[] v = work.get();
        imaginary = v[1];
        value = v[0];
      } catch (RuntimeException | Error e) {
        failure = e;
      }
    };
  }

  @Override
  public double imaginary() {
    return imaginary;
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
