package com.vertxcuda.blas;

/** Which triangle of a symmetric or triangular matrix is used. */
public enum FillMode {
  UPPER, LOWER
}
