package com.vertxcuda.blas;

import com.vertxcuda.BufferHandle;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

import java.util.List;

/**
 * One BLAS call, named by {@link #getOp()}, with cuBLAS's arguments: column-major matrices
 * {@code a, b, c} with leading dimensions, vectors {@code x, y} with increments. Each operation
 * reads only the fields it needs (see {@link BlasOp}); buffers are handles or views, F32 or F64
 * or complex C64 and C128 (with {@link Transpose#C}, {@link #setAlphaImag} and {@link #setBetaImag}); the
 * Ex GEMMs also F16 and BF16 inputs. Band widths are {@code k} (symmetric, Hermitian and triangular
 * band matrices) or {@code kl} and {@code ku} (GBMV); packed matrices are in {@code a}; the members of
 * a GEMM_BATCHED_EX are {@code batchA}, {@code batchB}, {@code batchC}. Replied with a {@link BlasReply}.
 */
@DataObject
@JsonGen(publicConverter = false)
public class BlasRequest {

  private BlasOp op;
  private Transpose transA = Transpose.N;
  private Transpose transB = Transpose.N;
  private FillMode uplo = FillMode.UPPER;
  private Side side = Side.LEFT;
  private Diagonal diag = Diagonal.NON_UNIT;
  private int m;
  private int n;
  private int k;
  private double alpha = 1;
  private double beta;
  private double alphaImag;
  private double betaImag;
  private BufferHandle a;
  private int lda;
  private BufferHandle b;
  private int ldb;
  private BufferHandle c;
  private int ldc;
  private BufferHandle x;
  private int incx = 1;
  private BufferHandle y;
  private int incy = 1;
  private long strideA;
  private long strideB;
  private long strideC;
  private int batchCount = 1;
  private double cosine = 1;
  private double sine;
  private boolean tf32;
  private int kl;
  private int ku;
  private double sineImag;
  private BlasComputeType computeType = BlasComputeType.DEFAULT;
  private List<BufferHandle> batchA;
  private List<BufferHandle> batchB;
  private List<BufferHandle> batchC;

  public BlasRequest() {
  }

  public BlasRequest(BlasOp op) {
    this.op = op;
  }

  public BlasRequest(JsonObject json) {
    BlasRequestConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    BlasRequestConverter.toJson(this, json);
    return json;
  }

  /** The routine. */
  public BlasOp getOp() { return op; }
  public BlasRequest setOp(BlasOp op) { this.op = op; return this; }

  /** op(A): A as stored or transposed (GEMM*, GEMV, GEAM, SYRK, TRSM). */
  public Transpose getTransA() { return transA; }
  public BlasRequest setTransA(Transpose transA) { this.transA = transA; return this; }

  /** op(B) (GEMM*, GEAM). */
  public Transpose getTransB() { return transB; }
  public BlasRequest setTransB(Transpose transB) { this.transB = transB; return this; }

  /** Triangle used (symmetric, Hermitian and triangular routines). */
  public FillMode getUplo() { return uplo; }
  public BlasRequest setUplo(FillMode uplo) { this.uplo = uplo; return this; }

  /** Side of A (SYMM, HEMM, TRMM, TRSM). */
  public Side getSide() { return side; }
  public BlasRequest setSide(Side side) { this.side = side; return this; }

  /** Unit or non-unit diagonal (triangular routines). */
  public Diagonal getDiag() { return diag; }
  public BlasRequest setDiag(Diagonal diag) { this.diag = diag; return this; }

  /** Rows of op(A) and C. */
  public int getM() { return m; }
  public BlasRequest setM(int m) { this.m = m; return this; }

  /** Columns of op(B) and C; the vector length of level-1 routines. */
  public int getN() { return n; }
  public BlasRequest setN(int n) { this.n = n; return this; }

  /** Columns of op(A), rows of op(B); the band width of SBMV, HBMV, TBMV and TBSV. */
  public int getK() { return k; }
  public BlasRequest setK(int k) { this.k = k; return this; }

  /** The alpha scalar. */
  public double getAlpha() { return alpha; }
  public BlasRequest setAlpha(double alpha) { this.alpha = alpha; return this; }

  /** The beta scalar. */
  public double getBeta() { return beta; }
  public BlasRequest setBeta(double beta) { this.beta = beta; return this; }

  /** The imaginary part of alpha: complex (C64, C128) data only, and not where alpha is real (HER, HPR, HERK). */
  public double getAlphaImag() { return alphaImag; }
  public BlasRequest setAlphaImag(double alphaImag) { this.alphaImag = alphaImag; return this; }

  /** The imaginary part of beta: complex (C64, C128) data only, and not where beta is real (HERK, HER2K). */
  public double getBetaImag() { return betaImag; }
  public BlasRequest setBetaImag(double betaImag) { this.betaImag = betaImag; return this; }

  public BufferHandle getA() { return a; }
  public BlasRequest setA(BufferHandle a) { this.a = a; return this; }

  /** Leading dimension of A, in elements. */
  public int getLda() { return lda; }
  public BlasRequest setLda(int lda) { this.lda = lda; return this; }

  public BufferHandle getB() { return b; }
  public BlasRequest setB(BufferHandle b) { this.b = b; return this; }

  /** Leading dimension of B, in elements. */
  public int getLdb() { return ldb; }
  public BlasRequest setLdb(int ldb) { this.ldb = ldb; return this; }

  public BufferHandle getC() { return c; }
  public BlasRequest setC(BufferHandle c) { this.c = c; return this; }

  /** Leading dimension of C, in elements. */
  public int getLdc() { return ldc; }
  public BlasRequest setLdc(int ldc) { this.ldc = ldc; return this; }

  public BufferHandle getX() { return x; }
  public BlasRequest setX(BufferHandle x) { this.x = x; return this; }

  /** Spacing of x's elements (>= 1). */
  public int getIncx() { return incx; }
  public BlasRequest setIncx(int incx) { this.incx = incx; return this; }

  public BufferHandle getY() { return y; }
  public BlasRequest setY(BufferHandle y) { this.y = y; return this; }

  /** Spacing of y's elements (>= 1). */
  public int getIncy() { return incy; }
  public BlasRequest setIncy(int incy) { this.incy = incy; return this; }

  /** Elements between consecutive A matrices (GEMM_STRIDED_BATCHED, GEMM_STRIDED_BATCHED_EX). */
  public long getStrideA() { return strideA; }
  public BlasRequest setStrideA(long strideA) { this.strideA = strideA; return this; }

  /** Elements between consecutive B matrices (GEMM_STRIDED_BATCHED). */
  public long getStrideB() { return strideB; }
  public BlasRequest setStrideB(long strideB) { this.strideB = strideB; return this; }

  /** Elements between consecutive C matrices (GEMM_STRIDED_BATCHED). */
  public long getStrideC() { return strideC; }
  public BlasRequest setStrideC(long strideC) { this.strideC = strideC; return this; }

  /** Matrices in the batch (the batched GEMMs; GEMM_BATCHED_EX's lists hold this many handles each). */
  public int getBatchCount() { return batchCount; }
  public BlasRequest setBatchCount(int batchCount) { this.batchCount = batchCount; return this; }

  /** The rotation's cosine (ROT). */
  public double getCosine() { return cosine; }
  public BlasRequest setCosine(double cosine) { this.cosine = cosine; return this; }

  /** The rotation's sine (ROT). */
  public double getSine() { return sine; }
  public BlasRequest setSine(double sine) { this.sine = sine; return this; }

  /**
   * Allow TF32 tensor-core math for F32 GEMMs (faster, 10-bit mantissa inputs); for the Ex GEMMs the
   * same as {@link BlasComputeType#F32_FAST_TF32}.
   */
  public boolean isTf32() { return tf32; }
  public BlasRequest setTf32(boolean tf32) { this.tf32 = tf32; return this; }

  /** Sub-diagonals of GBMV's band matrix. */
  public int getKl() { return kl; }
  public BlasRequest setKl(int kl) { this.kl = kl; return this; }

  /** Super-diagonals of GBMV's band matrix. */
  public int getKu() { return ku; }
  public BlasRequest setKu(int ku) { this.ku = ku; return this; }

  /** The imaginary part of the rotation's sine (complex ROT); 0 otherwise. */
  public double getSineImag() { return sineImag; }
  public BlasRequest setSineImag(double sineImag) { this.sineImag = sineImag; return this; }

  /** The compute type of the Ex GEMMs. */
  public BlasComputeType getComputeType() { return computeType; }
  public BlasRequest setComputeType(BlasComputeType computeType) { this.computeType = computeType; return this; }

  /** GEMM_BATCHED_EX: each member's A, batchCount handles or views (any buffers, any offsets). */
  public List<BufferHandle> getBatchA() { return batchA; }
  public BlasRequest setBatchA(List<BufferHandle> batchA) { this.batchA = batchA; return this; }

  /** GEMM_BATCHED_EX: each member's B. */
  public List<BufferHandle> getBatchB() { return batchB; }
  public BlasRequest setBatchB(List<BufferHandle> batchB) { this.batchB = batchB; return this; }

  /** GEMM_BATCHED_EX: each member's C, written; no two may overlap, nor any A or B. */
  public List<BufferHandle> getBatchC() { return batchC; }
  public BlasRequest setBatchC(List<BufferHandle> batchC) { this.batchC = batchC; return this; }
}
