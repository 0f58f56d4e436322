package com.vertxcuda.blas;

/** Whether a matrix argument is used as stored (N) or transposed (T). */
public enum Transpose {
  N, T
}
