package com.vertxcuda.blas;

/** Whether a matrix argument is used as stored (N) or transposed (T). */
public enum Transpose {
  N, T,
  /** Conjugate transpose: complex (C64, C128) data only (real data takes T). */
  C
}
