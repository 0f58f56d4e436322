package com.vertxcuda.blas.impl;

import com.vertxcuda.internal.CallerOrder;
import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.internal.VertxInternals;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.Failures;
import com.vertxcuda.Library;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.blas.BlasBatch;
import com.vertxcuda.blas.BlasBatchReply;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.blas.BlasClientOptions;
import com.vertxcuda.blas.BlasComputeType;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasOutcome;
import com.vertxcuda.blas.BlasReply;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.blas.Diagonal;
import com.vertxcuda.blas.FillMode;
import com.vertxcuda.blas.Side;
import com.vertxcuda.blas.Transpose;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

import java.util.ArrayList;
import java.util.List;

public final class BlasClientImpl implements BlasClient {

  private final RequestSender sender;
  private final boolean coalesce;
  private final int maxCoalesced;

  public BlasClientImpl(Vertx vertx, DeviceClientOptions options, BlasClientOptions blas) {
    this.sender = RequestSender.of(vertx, options, Library.BLAS);
    this.coalesce = blas.isCoalesce();
    this.maxCoalesced = blas.getMaxCoalesced();
  }

  @Override
  public String address() {
    return sender.address();
  }

  @Override
  public Future<BlasReply> execute(BlasRequest request) {
    if (!coalesce) {
      return sender.request(request);
    }
    CallerOrder order = sender.order();
    // A group takes requests only while nothing was made after it on its caller: the group this
    // client is filling, if any, is the last place in the caller's order.
    if (order.last() instanceof Group group && group.of(this)) {
      Future<BlasReply> added = group.add(request);
      if (added != null) {
        return added;
      }
    }
    Group fresh = new Group(order, sender.callerContext());
    Future<BlasReply> first = fresh.add(request);
    sender.hold(order, fresh.context, sender.localRoute() != null, fresh);
    // Sent at the end of the task that made it, or earlier if a later request waits behind it.
    fresh.context.runOnContext(v -> fresh.close());
    return first;
  }

  /**
   * The requests one caller makes within one task, sent as one {@link BlasBatch} in their place in
   * the caller's order: when the task ends, when {@code maxCoalesced} are in, or when a later
   * request on that caller waits behind it, whichever comes first.
   */
  private final class Group implements CallerOrder.Hold {
    final CallerOrder order;
    final Context context;
    final List<BlasRequest> requests = new ArrayList<>();
    final List<Promise<BlasReply>> promises = new ArrayList<>();
    boolean closed;
    boolean turn;
    boolean sent;

    Group(CallerOrder order, Context context) {
      this.order = order;
      this.context = context;
    }

    boolean of(BlasClientImpl client) {
      return BlasClientImpl.this == client;
    }

    // Null once the group is closed. A full group leaves (if its turn has come) and frees its place.
    Future<BlasReply> add(BlasRequest request) {
      Promise<BlasReply> promise;
      boolean full;
      synchronized (this) {
        if (closed) {
          return null;
        }
        // The caller's: a member's handler that throws cannot stop the others' answers.
        promise = VertxInternals.promise(context);
        requests.add(request);
        promises.add(promise);
        full = requests.size() >= maxCoalesced;
        if (full) {
          closed = true;
          sendIfDue();
        }
      }
      if (full) {
        releaseIfSent();
      }
      return promise.future();
    }

    @Override
    public void turn() {
      synchronized (this) {
        turn = true;
        sendIfDue();
      }
      releaseIfSent();
    }

    @Override
    public void hurry() {
      close();
    }

    void close() {
      synchronized (this) {
        closed = true;
        sendIfDue();
      }
      releaseIfSent();
    }

    // Under the lock: once closed and its turn has come, the group leaves (once).
    private void sendIfDue() {
      if (closed && turn && !sent) {
        sent = true;
        try {
          send(requests, promises, context, order);
        } catch (RuntimeException | Error e) {
          // Never sent: every member hears why (in a task of its own, not under this lock), and the
          // group still frees its place.
          CudaException failure = Failures.toCudaException(e);
          List<Promise<BlasReply>> members = new ArrayList<>(promises);
          context.runOnContext(v -> members.forEach(p -> p.tryFail(failure)));
        }
      }
    }

    private void releaseIfSent() {
      boolean release;
      synchronized (this) {
        release = sent;
      }
      if (release) {
        order.release(this);
      }
    }
  }

  @Override
  public Future<BlasBatchReply> executeBatch(BlasBatch batch) {
    return sender.request(batch);
  }

  private void send(List<BlasRequest> requests, List<Promise<BlasReply>> promises, Context context, CallerOrder order) {
    if (requests.size() == 1) {
      sender.<BlasReply>dispatch(requests.get(0), context, order).onComplete(promises.get(0));
      return;
    }
    sender.<BlasBatchReply>dispatch(new BlasBatch(requests), context, order).onComplete(ar -> {
      List<BlasOutcome> outcomes = ar.succeeded() ? ar.result().getOutcomes() : List.of();
      for (int i = 0; i < promises.size(); i++) {
        if (ar.failed()) {
          promises.get(i).fail(ar.cause());
        } else if (i >= outcomes.size()) {
          promises.get(i).fail(new CudaException(FailureCode.LIBRARY_ERROR, "the BLAS verticle answered "
            + outcomes.size() + " of " + promises.size() + " requests"));
        } else if (outcomes.get(i).succeeded()) {
          promises.get(i).complete(outcomes.get(i).getReply());
        } else {
          promises.get(i).fail(outcomes.get(i).cause());
        }
      }
    });
  }

  private Future<BufferHandle> output(BlasRequest r) {
    return execute(r).map(BlasReply::getOutput);
  }

  private static BlasRequest gemmRequest(BlasOp op, Transpose transA, Transpose transB, int m, int n, int k,
                                         double alpha, BufferHandle a, int lda, BufferHandle b, int ldb, double beta,
                                         BufferHandle c, int ldc) {
    return new BlasRequest(op).setTransA(transA).setTransB(transB).setM(m).setN(n).setK(k).setAlpha(alpha)
      .setA(a).setLda(lda).setB(b).setLdb(ldb).setBeta(beta).setC(c).setLdc(ldc);
  }

  @Override
  public Future<BufferHandle> gemm(Transpose transA, Transpose transB, int m, int n, int k, double alpha,
                                   BufferHandle a, int lda, BufferHandle b, int ldb, double beta, BufferHandle c,
                                   int ldc) {
    return output(gemmRequest(BlasOp.GEMM, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
  }

  @Override
  public Future<BufferHandle> gemmStridedBatched(Transpose transA, Transpose transB, int m, int n, int k,
                                                 double alpha, BufferHandle a, int lda, long strideA, BufferHandle b,
                                                 int ldb, long strideB, double beta, BufferHandle c, int ldc,
                                                 long strideC, int batchCount) {
    return output(gemmRequest(BlasOp.GEMM_STRIDED_BATCHED, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c,
      ldc).setStrideA(strideA).setStrideB(strideB).setStrideC(strideC).setBatchCount(batchCount));
  }

  @Override
  public Future<BufferHandle> gemmEx(Transpose transA, Transpose transB, int m, int n, int k, double alpha,
                                     BufferHandle a, int lda, BufferHandle b, int ldb, double beta, BufferHandle c,
                                     int ldc, boolean tf32) {
    return output(gemmRequest(BlasOp.GEMM_EX, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
      .setTf32(tf32));
  }

  private static BlasRequest vectors(BlasOp op, int n, BufferHandle x, int incx, BufferHandle y, int incy) {
    return new BlasRequest(op).setN(n).setX(x).setIncx(incx).setY(y).setIncy(incy);
  }

  @Override
  public Future<BufferHandle> axpy(int n, double alpha, BufferHandle x, int incx, BufferHandle y, int incy) {
    return output(vectors(BlasOp.AXPY, n, x, incx, y, incy).setAlpha(alpha));
  }

  @Override
  public Future<Double> dot(int n, BufferHandle x, int incx, BufferHandle y, int incy) {
    return execute(vectors(BlasOp.DOT, n, x, incx, y, incy)).map(BlasReply::getValue);
  }

  @Override
  public Future<Double> nrm2(int n, BufferHandle x, int incx) {
    return execute(vectors(BlasOp.NRM2, n, x, incx, null, 1)).map(BlasReply::getValue);
  }

  @Override
  public Future<BufferHandle> scal(int n, double alpha, BufferHandle x, int incx) {
    return output(vectors(BlasOp.SCAL, n, x, incx, null, 1).setAlpha(alpha));
  }

  @Override
  public Future<Double> asum(int n, BufferHandle x, int incx) {
    return execute(vectors(BlasOp.ASUM, n, x, incx, null, 1)).map(BlasReply::getValue);
  }

  @Override
  public Future<Integer> iamax(int n, BufferHandle x, int incx) {
    return execute(vectors(BlasOp.IAMAX, n, x, incx, null, 1)).map(BlasReply::getIndex);
  }

  @Override
  public Future<Integer> iamin(int n, BufferHandle x, int incx) {
    return execute(vectors(BlasOp.IAMIN, n, x, incx, null, 1)).map(BlasReply::getIndex);
  }

  @Override
  public Future<BufferHandle> copy(int n, BufferHandle x, int incx, BufferHandle y, int incy) {
    return output(vectors(BlasOp.COPY, n, x, incx, y, incy));
  }

  @Override
  public Future<Void> swap(int n, BufferHandle x, int incx, BufferHandle y, int incy) {
    return execute(vectors(BlasOp.SWAP, n, x, incx, y, incy)).mapEmpty();
  }

  @Override
  public Future<Void> rot(int n, BufferHandle x, int incx, BufferHandle y, int incy, double c, double s) {
    return execute(vectors(BlasOp.ROT, n, x, incx, y, incy).setCosine(c).setSine(s)).mapEmpty();
  }

  @Override
  public Future<BufferHandle> gemv(Transpose trans, int m, int n, double alpha, BufferHandle a, int lda,
                                   BufferHandle x, int incx, double beta, BufferHandle y, int incy) {
    return output(vectors(BlasOp.GEMV, n, x, incx, y, incy).setTransA(trans).setM(m).setAlpha(alpha).setA(a)
      .setLda(lda).setBeta(beta));
  }

  @Override
  public Future<BufferHandle> ger(int m, int n, double alpha, BufferHandle x, int incx, BufferHandle y, int incy,
                                  BufferHandle a, int lda) {
    return output(vectors(BlasOp.GER, n, x, incx, y, incy).setM(m).setAlpha(alpha).setA(a).setLda(lda));
  }

  @Override
  public Future<BufferHandle> geam(Transpose transA, Transpose transB, int m, int n, double alpha, BufferHandle a,
                                   int lda, double beta, BufferHandle b, int ldb, BufferHandle c, int ldc) {
    return output(gemmRequest(BlasOp.GEAM, transA, transB, m, n, 0, alpha, a, lda, b, ldb, beta, c, ldc));
  }

  @Override
  public Future<BufferHandle> syrk(FillMode uplo, Transpose trans, int n, int k, double alpha, BufferHandle a,
                                   int lda, double beta, BufferHandle c, int ldc) {
    return output(new BlasRequest(BlasOp.SYRK).setUplo(uplo).setTransA(trans).setN(n).setK(k).setAlpha(alpha)
      .setA(a).setLda(lda).setBeta(beta).setC(c).setLdc(ldc));
  }

  @Override
  public Future<BufferHandle> trsm(Side side, FillMode uplo, Transpose trans, Diagonal diag, int m, int n,
                                   double alpha, BufferHandle a, int lda, BufferHandle b, int ldb) {
    return output(new BlasRequest(BlasOp.TRSM).setSide(side).setUplo(uplo).setTransA(trans).setDiag(diag).setM(m)
      .setN(n).setAlpha(alpha).setA(a).setLda(lda).setB(b).setLdb(ldb));
  }

  private static BlasRequest sided(BlasOp op, Side side, FillMode uplo, int m, int n, double alpha, BufferHandle a,
                                   int lda, BufferHandle b, int ldb, double beta, BufferHandle c, int ldc) {
    return new BlasRequest(op).setSide(side).setUplo(uplo).setM(m).setN(n).setAlpha(alpha).setA(a).setLda(lda)
      .setB(b).setLdb(ldb).setBeta(beta).setC(c).setLdc(ldc);
  }

  @Override
  public Future<BufferHandle> symm(Side side, FillMode uplo, int m, int n, double alpha, BufferHandle a, int lda,
                                   BufferHandle b, int ldb, double beta, BufferHandle c, int ldc) {
    return output(sided(BlasOp.SYMM, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc));
  }

  @Override
  public Future<BufferHandle> hemm(Side side, FillMode uplo, int m, int n, double alpha, BufferHandle a, int lda,
                                   BufferHandle b, int ldb, double beta, BufferHandle c, int ldc) {
    return output(sided(BlasOp.HEMM, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc));
  }

  private static BlasRequest rankK(BlasOp op, FillMode uplo, Transpose trans, int n, int k, double alpha,
                                   BufferHandle a, int lda, double beta, BufferHandle c, int ldc) {
    return new BlasRequest(op).setUplo(uplo).setTransA(trans).setN(n).setK(k).setAlpha(alpha).setA(a).setLda(lda)
      .setBeta(beta).setC(c).setLdc(ldc);
  }

  @Override
  public Future<BufferHandle> herk(FillMode uplo, Transpose trans, int n, int k, double alpha, BufferHandle a,
                                   int lda, double beta, BufferHandle c, int ldc) {
    return output(rankK(BlasOp.HERK, uplo, trans, n, k, alpha, a, lda, beta, c, ldc));
  }

  @Override
  public Future<BufferHandle> syr2k(FillMode uplo, Transpose trans, int n, int k, double alpha, BufferHandle a,
                                    int lda, BufferHandle b, int ldb, double beta, BufferHandle c, int ldc) {
    return output(rankK(BlasOp.SYR2K, uplo, trans, n, k, alpha, a, lda, beta, c, ldc).setB(b).setLdb(ldb));
  }

  @Override
  public Future<BufferHandle> her2k(FillMode uplo, Transpose trans, int n, int k, double alpha, BufferHandle a,
                                    int lda, BufferHandle b, int ldb, double beta, BufferHandle c, int ldc) {
    return output(rankK(BlasOp.HER2K, uplo, trans, n, k, alpha, a, lda, beta, c, ldc).setB(b).setLdb(ldb));
  }

  @Override
  public Future<BufferHandle> trmm(Side side, FillMode uplo, Transpose trans, Diagonal diag, int m, int n,
                                   double alpha, BufferHandle a, int lda, BufferHandle b, int ldb, BufferHandle c,
                                   int ldc) {
    return output(sided(BlasOp.TRMM, side, uplo, m, n, alpha, a, lda, b, ldb, 0, c, ldc).setTransA(trans)
      .setDiag(diag));
  }

  @Override
  public Future<Void> gemmBatchedEx(Transpose transA, Transpose transB, int m, int n, int k, double alpha,
                                    List<BufferHandle> batchA, int lda, List<BufferHandle> batchB, int ldb,
                                    double beta, List<BufferHandle> batchC, int ldc, BlasComputeType computeType) {
    return execute(gemmRequest(BlasOp.GEMM_BATCHED_EX, transA, transB, m, n, k, alpha, null, lda, null, ldb, beta,
      null, ldc).setBatchA(batchA).setBatchB(batchB).setBatchC(batchC)
      .setBatchCount(batchA == null ? 0 : batchA.size()).setComputeType(computeType)).mapEmpty();
  }

  @Override
  public Future<BufferHandle> gemmStridedBatchedEx(Transpose transA, Transpose transB, int m, int n, int k,
                                                   double alpha, BufferHandle a, int lda, long strideA,
                                                   BufferHandle b, int ldb, long strideB, double beta,
                                                   BufferHandle c, int ldc, long strideC, int batchCount,
                                                   BlasComputeType computeType) {
    return output(gemmRequest(BlasOp.GEMM_STRIDED_BATCHED_EX, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta,
      c, ldc).setStrideA(strideA).setStrideB(strideB).setStrideC(strideC).setBatchCount(batchCount)
      .setComputeType(computeType));
  }
}
