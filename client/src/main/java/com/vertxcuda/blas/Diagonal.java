package com.vertxcuda.blas;

/** Whether a triangular matrix's diagonal is read (NON_UNIT) or taken as ones (UNIT). */
public enum Diagonal {
  NON_UNIT, UNIT
}
