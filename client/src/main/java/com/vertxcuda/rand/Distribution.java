package com.vertxcuda.rand;

/** What the generated numbers follow. UNIFORM, NORMAL, LOG_NORMAL fill F32 or F64 buffers; POISSON fills U32. */
public enum Distribution {
  /** Uniform on (0, 1]. */
  UNIFORM,
  /** Normal with mean and stddev. */
  NORMAL,
  /** exp of a normal with mean and stddev. */
  LOG_NORMAL,
  /** Poisson with lambda. */
  POISSON
}
