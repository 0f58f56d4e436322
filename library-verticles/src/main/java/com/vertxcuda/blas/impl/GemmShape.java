package com.vertxcuda.blas.impl;

import com.vertxcuda.DType;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.blas.Transpose;

/** What GEMM requests must share to run as one batched call. */
record GemmShape(DType input, DType output, Transpose transA, Transpose transB, int m, int n, int k, int lda,
                 int ldb, int ldc, double alpha, double beta, boolean tf32) {

  // Compared for every GEMM of a batch: plain field comparisons rather than the generated equals.
  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof GemmShape)) {
      return false;
    }
    GemmShape g = (GemmShape) o;
    return m == g.m && n == g.n && k == g.k && lda == g.lda && ldb == g.ldb && ldc == g.ldc && tf32 == g.tf32
      && input == g.input && output == g.output && transA == g.transA && transB == g.transB
      && Double.doubleToLongBits(alpha) == Double.doubleToLongBits(g.alpha)
      && Double.doubleToLongBits(beta) == Double.doubleToLongBits(g.beta);
  }

  @Override
  public int hashCode() {
    return ((m * 31 + n) * 31 + k) * 31 + Double.hashCode(alpha);
  }

  static GemmShape of(BlasCall call) {
    BlasRequest r = call.request();
    return new GemmShape(call.a().dtype(), call.c().dtype(), r.getTransA(), r.getTransB(), r.getM(), r.getN(),
      r.getK(), r.getLda(), r.getLdb(), r.getLdc(), r.getAlpha(), r.getBeta(), r.isTf32());
  }
}
