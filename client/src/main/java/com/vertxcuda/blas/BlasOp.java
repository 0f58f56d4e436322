package com.vertxcuda.blas;

/**
 * The BLAS routines a {@link BlasRequest} can name, with cuBLAS's semantics (column-major, 1-based
 * iamax/iamin). Unless a routine says otherwise it takes F32, F64, C64 and C128 operands (cuBLAS's
 * S, D, C and Z), all of one dtype; complex scalars are {@code alpha + i alphaImag} and
 * {@code beta + i betaImag}. Hermitian routines (HE*, HP*, HB*, HERK, HER2K, DOTC, GERC) take C64
 * and C128 only, the packed and banded symmetric ones (SPMV, SBMV, SPR, SPR2) F32 and F64 only, as in
 * cuBLAS. Banded matrices are stored as BLAS stores them ({@code k + 1} or {@code kl + ku + 1} rows,
 * leading dimension {@code lda}); packed ones as {@code n (n + 1) / 2} contiguous elements in {@code a}.
 */
public enum BlasOp {
  /** C = alpha op(A) op(B) + beta C. */
  GEMM,
  /** {@link #GEMM} on batchCount matrices spaced strideA/strideB/strideC elements apart. */
  GEMM_STRIDED_BATCHED,
  /**
   * GEMM with mixed data and compute types ({@link BlasComputeType}): F16 or BF16 inputs with an F32
   * (or same-type) output, or F32, F64, C64, C128 throughout.
   */
  GEMM_EX,
  /** y = alpha x + y. */
  AXPY,
  /** x . y (for complex x^T y, unconjugated: DOTU), replied as value (and valueImag). */
  DOT,
  /** Euclidean norm of x, replied as value. */
  NRM2,
  /** x = alpha x (complex x with a real alpha runs cuBLAS's CSSCAL / ZDSCAL). */
  SCAL,
  /** Sum of |x_i| (for complex |re| + |im|), replied as value. */
  ASUM,
  /** 1-based index of the first largest |x_i| (for complex |re| + |im|), replied as index. */
  IAMAX,
  /** 1-based index of the first smallest |x_i| (for complex |re| + |im|), replied as index. */
  IAMIN,
  /** y = x. */
  COPY,
  /** x and y exchange contents. */
  SWAP,
  /**
   * Plane rotation of (x, y): x = c x + s y, y = c y - conj(s) x, c = cosine, s = sine + i sineImag
   * (complex with a real sine: cuBLAS's CSROT / ZDROT).
   */
  ROT,
  /** y = alpha op(A) x + beta y, A m x n as stored. */
  GEMV,
  /** A = alpha x y^T + A (for complex GERU). */
  GER,
  /** C = alpha op(A) + beta op(B) (F32, F64). */
  GEAM,
  /** C = alpha op(A) op(A)^T + beta C, on the uplo triangle of C (complex: transA N or T). */
  SYRK,
  /** Solves op(A) X = alpha B (side LEFT) or X op(A) = alpha B (RIGHT) for X, written over B. */
  TRSM,
  /** x^H y (conjugated dot, C64 and C128), replied as value and valueImag. */
  DOTC,
  /** A = alpha x y^H + A (C64, C128). */
  GERC,
  /** y = alpha op(A) x + beta y, A an m x n band matrix with kl sub- and ku super-diagonals. */
  GBMV,
  /** y = alpha A x + beta y, A n x n symmetric, read from its uplo triangle. */
  SYMV,
  /** y = alpha A x + beta y, A n x n Hermitian (C64, C128). */
  HEMV,
  /** SYMV with A a symmetric band matrix of k super-diagonals (F32, F64). */
  SBMV,
  /** HEMV with A a Hermitian band matrix of k super-diagonals. */
  HBMV,
  /** SYMV with A packed (F32, F64). */
  SPMV,
  /** HEMV with A packed. */
  HPMV,
  /** A = alpha x x^T + A on the uplo triangle. */
  SYR,
  /** A = alpha x x^H + A on the uplo triangle, alpha real. */
  HER,
  /** A = alpha (x y^T + y x^T) + A on the uplo triangle. */
  SYR2,
  /** A = alpha x y^H + conj(alpha) y x^H + A on the uplo triangle. */
  HER2,
  /** SYR on a packed A (F32, F64). */
  SPR,
  /** HER on a packed A. */
  HPR,
  /** SYR2 on a packed A (F32, F64). */
  SPR2,
  /** HER2 on a packed A. */
  HPR2,
  /** x = op(A) x, A n x n triangular (uplo, diag). */
  TRMV,
  /** TRMV with A a triangular band matrix of k off-diagonals. */
  TBMV,
  /** TRMV with A packed. */
  TPMV,
  /** Solves op(A) x' = x for x', written over x. */
  TRSV,
  /** TRSV with A a triangular band matrix of k off-diagonals. */
  TBSV,
  /** TRSV with A packed. */
  TPSV,
  /** C = alpha A B + beta C (side LEFT) or alpha B A + beta C (RIGHT), A symmetric (uplo). */
  SYMM,
  /** SYMM with A Hermitian. */
  HEMM,
  /** C = alpha op(A) op(A)^H + beta C on the uplo triangle, alpha and beta real, transA N or C. */
  HERK,
  /** C = alpha (op(A) op(B)^T + op(B) op(A)^T) + beta C on the uplo triangle (complex: transA N or T). */
  SYR2K,
  /** C = alpha op(A) op(B)^H + conj(alpha) op(B) op(A)^H + beta C on the uplo triangle, beta real, transA N or C. */
  HER2K,
  /** C = alpha op(A) B (side LEFT) or alpha B op(A) (RIGHT), A triangular; C may be B itself (same ld). */
  TRMM,
  /**
   * GEMM over batchCount members whose A, B and C are each their own handle or view (batchA,
   * batchB, batchC), with {@link #GEMM_EX}'s data and compute types.
   */
  GEMM_BATCHED_EX,
  /** {@link #GEMM_STRIDED_BATCHED} with {@link #GEMM_EX}'s data and compute types. */
  GEMM_STRIDED_BATCHED_EX
}
