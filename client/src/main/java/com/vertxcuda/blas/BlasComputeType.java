package com.vertxcuda.blas;

/**
 * The compute type of GEMM_EX, GEMM_BATCHED_EX and GEMM_STRIDED_BATCHED_EX (cuBLAS's
 * {@code cublasComputeType_t}); alpha and beta are of the compute type (complex for complex data).
 */
public enum BlasComputeType {
  /**
   * The inputs' natural one: F32 for F16, BF16, F32 and C64 data (TF32 when the request's tf32 is
   * set), F64 for F64 and C128.
   */
  DEFAULT,
  /** Half-precision compute: F16 inputs and output only. */
  F16,
  /** Single-precision compute: F16, BF16, F32 or C64 inputs. */
  F32,
  /** Single precision with TF32 tensor-core products (inputs rounded to a 10-bit mantissa): F32 or C64 data. */
  F32_FAST_TF32,
  /** Double-precision compute: F64 or C128 data. */
  F64
}
