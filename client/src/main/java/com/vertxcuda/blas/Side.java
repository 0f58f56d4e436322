package com.vertxcuda.blas;

/** Whether the triangular matrix of a TRSM is on the left or the right of X. */
public enum Side {
  LEFT, RIGHT
}
