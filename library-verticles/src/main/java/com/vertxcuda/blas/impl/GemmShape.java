package com.vertxcuda.blas.impl;

import com.vertxcuda.DType;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.blas.Transpose;

/** What GEMM requests must share to run as one batched call. */
record GemmShape(DType input, DType output, Transpose transA, Transpose transB, int m, int n, int k, int lda,
                 int ldb, int ldc, double alpha, double beta, boolean tf32) {

  static GemmShape of(BlasCall call) {
    BlasRequest r = call.request();
    return new GemmShape(call.a().dtype(), call.c().dtype(), r.getTransA(), r.getTransB(), r.getM(), r.getN(),
      r.getK(), r.getLda(), r.getLdb(), r.getLdc(), r.getAlpha(), r.getBeta(), r.isTf32());
  }
}
