package com.vertxcuda.blas;

/** The BLAS routines a {@link BlasRequest} can name (cuBLAS semantics, 1-based iamax/iamin). */
public enum BlasOp {
  /** C = alpha op(A) op(B) + beta C. */
  GEMM,
  /** {@link #GEMM} on batchCount matrices spaced strideA/strideB/strideC elements apart. */
  GEMM_STRIDED_BATCHED,
  /** GEMM with F16, BF16 or F32 inputs, F32 output and F32 (or TF32) compute. */
  GEMM_EX,
  /** y = alpha x + y. */
  AXPY,
  /** x . y, replied as value. */
  DOT,
  /** Euclidean norm of x, replied as value. */
  NRM2,
  /** x = alpha x. */
  SCAL,
  /** Sum of |x_i|, replied as value. */
  ASUM,
  /** 1-based index of the first largest |x_i|, replied as index. */
  IAMAX,
  /** 1-based index of the first smallest |x_i|, replied as index. */
  IAMIN,
  /** y = x. */
  COPY,
  /** x and y exchange contents. */
  SWAP,
  /** Plane rotation of (x, y) by cosine and sine. */
  ROT,
  /** y = alpha op(A) x + beta y. */
  GEMV,
  /** A = alpha x y^T + A. */
  GER,
  /** C = alpha op(A) + beta op(B). */
  GEAM,
  /** C = alpha op(A) op(A)^T + beta C, on the uplo triangle of C. */
  SYRK,
  /** Solves op(A) X = alpha B (side LEFT) or X op(A) = alpha B (RIGHT) for X, written over B. */
  TRSM
}
