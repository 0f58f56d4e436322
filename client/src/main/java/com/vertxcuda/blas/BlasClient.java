package com.vertxcuda.blas;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.blas.impl.BlasClientImpl;
import io.vertx.codegen.annotations.VertxGen;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.util.List;

/**
 * A typed client for one device's BLAS verticle, usable from any node of the event bus. Arguments
 * follow cuBLAS (column-major, leading dimensions in elements, 1-based iamax/iamin); the future
 * completes when the device has finished, or fails with a {@link com.vertxcuda.CudaException}
 * (BAD_REQUEST names the offending field).
 */
@VertxGen
public interface BlasClient {

  static BlasClient create(Vertx vertx) {
    return create(vertx, new DeviceClientOptions());
  }

  static BlasClient create(Vertx vertx, DeviceClientOptions options) {
    return create(vertx, options, new BlasClientOptions());
  }

  /** A client that may coalesce its requests (see {@link BlasClientOptions}). */
  static BlasClient create(Vertx vertx, DeviceClientOptions options, BlasClientOptions blasOptions) {
    return new BlasClientImpl(vertx, options, blasOptions);
  }

  /** The BLAS address this client talks to. */
  String address();

  /** Sends any request (coalesced with others when the client coalesces). */
  Future<BlasReply> execute(BlasRequest request);

  /** Sends several requests as one message; the reply has an outcome per request, in order. */
  Future<BlasBatchReply> executeBatch(BlasBatch batch);

  /** C = alpha op(A) op(B) + beta C; replies C. */
  Future<BufferHandle> gemm(Transpose transA, Transpose transB, int m, int n, int k, double alpha,
                            BufferHandle a, int lda, BufferHandle b, int ldb, double beta, BufferHandle c, int ldc);

  /** GEMM over batchCount matrices spaced strideA/B/C elements apart; replies C. */
  Future<BufferHandle> gemmStridedBatched(Transpose transA, Transpose transB, int m, int n, int k, double alpha,
                                          BufferHandle a, int lda, long strideA, BufferHandle b, int ldb, long strideB,
                                          double beta, BufferHandle c, int ldc, long strideC, int batchCount);

  /** GEMM with F16/BF16/F32 inputs and an F32 output; {@code tf32} allows TF32 tensor-core math. */
  Future<BufferHandle> gemmEx(Transpose transA, Transpose transB, int m, int n, int k, double alpha,
                              BufferHandle a, int lda, BufferHandle b, int ldb, double beta, BufferHandle c, int ldc,
                              boolean tf32);

  /** y = alpha x + y; replies y. */
  Future<BufferHandle> axpy(int n, double alpha, BufferHandle x, int incx, BufferHandle y, int incy);

  Future<Double> dot(int n, BufferHandle x, int incx, BufferHandle y, int incy);

  Future<Double> nrm2(int n, BufferHandle x, int incx);

  /** x = alpha x; replies x. */
  Future<BufferHandle> scal(int n, double alpha, BufferHandle x, int incx);

  Future<Double> asum(int n, BufferHandle x, int incx);

  /** 1-based index of the first largest |x_i|. */
  Future<Integer> iamax(int n, BufferHandle x, int incx);

  /** 1-based index of the first smallest |x_i|. */
  Future<Integer> iamin(int n, BufferHandle x, int incx);

  /** y = x; replies y. */
  Future<BufferHandle> copy(int n, BufferHandle x, int incx, BufferHandle y, int incy);

  /** Exchanges x and y. */
  Future<Void> swap(int n, BufferHandle x, int incx, BufferHandle y, int incy);

  /** (x, y) = (c x + s y, c y - s x). */
  Future<Void> rot(int n, BufferHandle x, int incx, BufferHandle y, int incy, double c, double s);

  /** y = alpha op(A) x + beta y, A m x n as stored; replies y. */
  Future<BufferHandle> gemv(Transpose trans, int m, int n, double alpha, BufferHandle a, int lda,
                            BufferHandle x, int incx, double beta, BufferHandle y, int incy);

  /** A = alpha x y^T + A, A m x n; replies A. */
  Future<BufferHandle> ger(int m, int n, double alpha, BufferHandle x, int incx, BufferHandle y, int incy,
                           BufferHandle a, int lda);

  /** C = alpha op(A) + beta op(B), C m x n; replies C. */
  Future<BufferHandle> geam(Transpose transA, Transpose transB, int m, int n, double alpha, BufferHandle a, int lda,
                            double beta, BufferHandle b, int ldb, BufferHandle c, int ldc);

  /** C = alpha op(A) op(A)^T + beta C on the uplo triangle, C n x n, op(A) n x k; replies C. */
  Future<BufferHandle> syrk(FillMode uplo, Transpose trans, int n, int k, double alpha, BufferHandle a, int lda,
                            double beta, BufferHandle c, int ldc);

  /** Solves op(A) X = alpha B (LEFT) or X op(A) = alpha B (RIGHT), B m x n, X written over B; replies B. */
  Future<BufferHandle> trsm(Side side, FillMode uplo, Transpose trans, Diagonal diag, int m, int n, double alpha,
                            BufferHandle a, int lda, BufferHandle b, int ldb);

  /** C = alpha A B + beta C (LEFT) or alpha B A + beta C (RIGHT), A symmetric (its uplo triangle), C m x n; replies C. */
  Future<BufferHandle> symm(Side side, FillMode uplo, int m, int n, double alpha, BufferHandle a, int lda,
                            BufferHandle b, int ldb, double beta, BufferHandle c, int ldc);

  /** {@link #symm} with A Hermitian (C64, C128; real alpha and beta here, complex ones through {@link #execute}). */
  Future<BufferHandle> hemm(Side side, FillMode uplo, int m, int n, double alpha, BufferHandle a, int lda,
                            BufferHandle b, int ldb, double beta, BufferHandle c, int ldc);

  /** C = alpha op(A) op(A)^H + beta C on the uplo triangle (C64, C128), trans N or C, C n x n; replies C. */
  Future<BufferHandle> herk(FillMode uplo, Transpose trans, int n, int k, double alpha, BufferHandle a, int lda,
                            double beta, BufferHandle c, int ldc);

  /** C = alpha (op(A) op(B)^T + op(B) op(A)^T) + beta C on the uplo triangle, C n x n; replies C. */
  Future<BufferHandle> syr2k(FillMode uplo, Transpose trans, int n, int k, double alpha, BufferHandle a, int lda,
                             BufferHandle b, int ldb, double beta, BufferHandle c, int ldc);

  /** C = alpha op(A) op(B)^H + alpha op(B) op(A)^H + beta C on the uplo triangle (C64, C128), trans N or C; replies C. */
  Future<BufferHandle> her2k(FillMode uplo, Transpose trans, int n, int k, double alpha, BufferHandle a, int lda,
                             BufferHandle b, int ldb, double beta, BufferHandle c, int ldc);

  /** C = alpha op(A) B (LEFT) or alpha B op(A) (RIGHT), A triangular, B and C m x n (C may be B); replies C. */
  Future<BufferHandle> trmm(Side side, FillMode uplo, Transpose trans, Diagonal diag, int m, int n, double alpha,
                            BufferHandle a, int lda, BufferHandle b, int ldb, BufferHandle c, int ldc);

  /**
   * GEMM over {@code batchA.size()} members, member i computing batchC[i] = alpha op(batchA[i])
   * op(batchB[i]) + beta batchC[i]; each handle or view may lie anywhere. Data types as
   * {@link BlasOp#GEMM_EX}, with {@code computeType}.
   */
  Future<Void> gemmBatchedEx(Transpose transA, Transpose transB, int m, int n, int k, double alpha,
                             List<BufferHandle> batchA, int lda, List<BufferHandle> batchB, int ldb, double beta,
                             List<BufferHandle> batchC, int ldc, BlasComputeType computeType);

  /** {@link #gemmStridedBatched} with {@link BlasOp#GEMM_EX}'s data types and {@code computeType}; replies C. */
  Future<BufferHandle> gemmStridedBatchedEx(Transpose transA, Transpose transB, int m, int n, int k, double alpha,
                                            BufferHandle a, int lda, long strideA, BufferHandle b, int ldb,
                                            long strideB, double beta, BufferHandle c, int ldc, long strideC,
                                            int batchCount, BlasComputeType computeType);
}
