package com.vertxcuda.blas;

/** Whether the symmetric, Hermitian or triangular matrix A is on the left or the right (SYMM, HEMM, TRMM, TRSM). */
public enum Side {
  LEFT, RIGHT
}
