package com.vertxcuda.blas;

/** Whether a matrix argument is used as stored (N) or transposed (T). */
public enum Transpose {
  N, T,
  /** Conjugate transpose: complex (C64, C128) GEMMs only; for real data T says the same. */
  C
}
