package com.vertxcuda.codec.impl;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.FailureCode;
import com.vertxcuda.blas.BlasBatch;
import com.vertxcuda.blas.BlasBatchReply;
import com.vertxcuda.blas.BlasComputeType;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasOutcome;
import com.vertxcuda.blas.BlasReply;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.blas.Diagonal;
import com.vertxcuda.blas.FillMode;
import com.vertxcuda.blas.Side;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.codec.CodecProvider;
import com.vertxcuda.codec.WireFormatException;
import com.vertxcuda.codec.WireIn;
import com.vertxcuda.codec.WireOut;
import com.vertxcuda.codec.WireType;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftReply;
import com.vertxcuda.fft.FftRequest;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.rand.Distribution;
import com.vertxcuda.rand.RandRequest;
import com.vertxcuda.rand.RngType;

import java.util.ArrayList;
import java.util.List;

/**
 * Binary wire formats of the library requests and replies, contributed to
 * {@link com.vertxcuda.codec.CudaCodecs} through {@code META-INF/services}. Bump a type's version
 * when its layout changes.
 */
public final class LibraryWireTypes implements CodecProvider {

  private static final int MAX_LIST = 16;

  /** What a BLAS request's field left out on the wire stands for: a new request's. */
  private static final BlasRequest D = new BlasRequest();

  /** The fields of {@link #BLAS_REQUEST}'s mask, one bit each in this order (append only: the wire's meaning). */
  private static final int BLAS_FIELDS = 36;

  /**
   * A BLAS request: its op, a mask (a long) of the fields that differ from a new request's (bit i for
   * the i-th field in the order below: transA, transB, uplo, side, diag, m, n, k, alpha, beta, a, lda, b, ldb, c, ldc, x, incx, y, incy, strideA, strideB, strideC, batchCount, cosine, sine, tf32, alphaImag, betaImag, kl, ku, sineImag, computeType, batchA, batchB, batchC), then those fields in that order. A GEMM sets about a
   * dozen of the 36; the others (vectors, strides, rotations, imaginary parts...) cost one bit each
   * instead of their bytes and a read each. Doubles compare by their bits (-0.0 and every NaN travel
   * as they are); enums, handles and handle lists by identity (a handle's default is none); a list
   * travels as its size, then its handles. Version 4 added kl, ku, sineImag, computeType and the
   * batch lists, and widened the mask to a long.
   */
  public static final WireType<BlasRequest> BLAS_REQUEST = WireType.of(BlasRequest.class, 4,
    (r, out) -> {
      long mask = 0;
      mask |= r.getTransA() != D.getTransA() ? 1L << 0 : 0;
      mask |= r.getTransB() != D.getTransB() ? 1L << 1 : 0;
      mask |= r.getUplo() != D.getUplo() ? 1L << 2 : 0;
      mask |= r.getSide() != D.getSide() ? 1L << 3 : 0;
      mask |= r.getDiag() != D.getDiag() ? 1L << 4 : 0;
      mask |= r.getM() != D.getM() ? 1L << 5 : 0;
      mask |= r.getN() != D.getN() ? 1L << 6 : 0;
      mask |= r.getK() != D.getK() ? 1L << 7 : 0;
      mask |= Double.doubleToRawLongBits(r.getAlpha()) != Double.doubleToRawLongBits(D.getAlpha()) ? 1L << 8 : 0;
      mask |= Double.doubleToRawLongBits(r.getBeta()) != Double.doubleToRawLongBits(D.getBeta()) ? 1L << 9 : 0;
      mask |= r.getA() != D.getA() ? 1L << 10 : 0;
      mask |= r.getLda() != D.getLda() ? 1L << 11 : 0;
      mask |= r.getB() != D.getB() ? 1L << 12 : 0;
      mask |= r.getLdb() != D.getLdb() ? 1L << 13 : 0;
      mask |= r.getC() != D.getC() ? 1L << 14 : 0;
      mask |= r.getLdc() != D.getLdc() ? 1L << 15 : 0;
      mask |= r.getX() != D.getX() ? 1L << 16 : 0;
      mask |= r.getIncx() != D.getIncx() ? 1L << 17 : 0;
      mask |= r.getY() != D.getY() ? 1L << 18 : 0;
      mask |= r.getIncy() != D.getIncy() ? 1L << 19 : 0;
      mask |= r.getStrideA() != D.getStrideA() ? 1L << 20 : 0;
      mask |= r.getStrideB() != D.getStrideB() ? 1L << 21 : 0;
      mask |= r.getStrideC() != D.getStrideC() ? 1L << 22 : 0;
      mask |= r.getBatchCount() != D.getBatchCount() ? 1L << 23 : 0;
      mask |= Double.doubleToRawLongBits(r.getCosine()) != Double.doubleToRawLongBits(D.getCosine()) ? 1L << 24 : 0;
      mask |= Double.doubleToRawLongBits(r.getSine()) != Double.doubleToRawLongBits(D.getSine()) ? 1L << 25 : 0;
      mask |= r.isTf32() != D.isTf32() ? 1L << 26 : 0;
      mask |= Double.doubleToRawLongBits(r.getAlphaImag()) != Double.doubleToRawLongBits(D.getAlphaImag()) ? 1L << 27 : 0;
      mask |= Double.doubleToRawLongBits(r.getBetaImag()) != Double.doubleToRawLongBits(D.getBetaImag()) ? 1L << 28 : 0;
      mask |= r.getKl() != D.getKl() ? 1L << 29 : 0;
      mask |= r.getKu() != D.getKu() ? 1L << 30 : 0;
      mask |= Double.doubleToRawLongBits(r.getSineImag()) != Double.doubleToRawLongBits(D.getSineImag()) ? 1L << 31 : 0;
      mask |= r.getComputeType() != D.getComputeType() ? 1L << 32 : 0;
      mask |= r.getBatchA() != D.getBatchA() ? 1L << 33 : 0;
      mask |= r.getBatchB() != D.getBatchB() ? 1L << 34 : 0;
      mask |= r.getBatchC() != D.getBatchC() ? 1L << 35 : 0;
      out.writeEnum(r.getOp()).writeLong(mask);
      if ((mask & 1L << 0) != 0) {
        out.writeEnum(r.getTransA());
      }
      if ((mask & 1L << 1) != 0) {
        out.writeEnum(r.getTransB());
      }
      if ((mask & 1L << 2) != 0) {
        out.writeEnum(r.getUplo());
      }
      if ((mask & 1L << 3) != 0) {
        out.writeEnum(r.getSide());
      }
      if ((mask & 1L << 4) != 0) {
        out.writeEnum(r.getDiag());
      }
      if ((mask & 1L << 5) != 0) {
        out.writeInt(r.getM());
      }
      if ((mask & 1L << 6) != 0) {
        out.writeInt(r.getN());
      }
      if ((mask & 1L << 7) != 0) {
        out.writeInt(r.getK());
      }
      if ((mask & 1L << 8) != 0) {
        out.writeDouble(r.getAlpha());
      }
      if ((mask & 1L << 9) != 0) {
        out.writeDouble(r.getBeta());
      }
      if ((mask & 1L << 10) != 0) {
        out.writeHandle(r.getA());
      }
      if ((mask & 1L << 11) != 0) {
        out.writeInt(r.getLda());
      }
      if ((mask & 1L << 12) != 0) {
        out.writeHandle(r.getB());
      }
      if ((mask & 1L << 13) != 0) {
        out.writeInt(r.getLdb());
      }
      if ((mask & 1L << 14) != 0) {
        out.writeHandle(r.getC());
      }
      if ((mask & 1L << 15) != 0) {
        out.writeInt(r.getLdc());
      }
      if ((mask & 1L << 16) != 0) {
        out.writeHandle(r.getX());
      }
      if ((mask & 1L << 17) != 0) {
        out.writeInt(r.getIncx());
      }
      if ((mask & 1L << 18) != 0) {
        out.writeHandle(r.getY());
      }
      if ((mask & 1L << 19) != 0) {
        out.writeInt(r.getIncy());
      }
      if ((mask & 1L << 20) != 0) {
        out.writeLong(r.getStrideA());
      }
      if ((mask & 1L << 21) != 0) {
        out.writeLong(r.getStrideB());
      }
      if ((mask & 1L << 22) != 0) {
        out.writeLong(r.getStrideC());
      }
      if ((mask & 1L << 23) != 0) {
        out.writeInt(r.getBatchCount());
      }
      if ((mask & 1L << 24) != 0) {
        out.writeDouble(r.getCosine());
      }
      if ((mask & 1L << 25) != 0) {
        out.writeDouble(r.getSine());
      }
      if ((mask & 1L << 26) != 0) {
        out.writeBoolean(r.isTf32());
      }
      if ((mask & 1L << 27) != 0) {
        out.writeDouble(r.getAlphaImag());
      }
      if ((mask & 1L << 28) != 0) {
        out.writeDouble(r.getBetaImag());
      }
      if ((mask & 1L << 29) != 0) {
        out.writeInt(r.getKl());
      }
      if ((mask & 1L << 30) != 0) {
        out.writeInt(r.getKu());
      }
      if ((mask & 1L << 31) != 0) {
        out.writeDouble(r.getSineImag());
      }
      if ((mask & 1L << 32) != 0) {
        out.writeEnum(r.getComputeType());
      }
      if ((mask & 1L << 33) != 0) {
        writeHandles(r.getBatchA(), out);
      }
      if ((mask & 1L << 34) != 0) {
        writeHandles(r.getBatchB(), out);
      }
      if ((mask & 1L << 35) != 0) {
        writeHandles(r.getBatchC(), out);
      }
    },
    in -> {
      BlasRequest r = new BlasRequest(in.readEnum(BlasOp.class));
      long mask = in.readLong();
      if ((mask & -(1L << BLAS_FIELDS)) != 0) {
        throw new WireFormatException("malformed BlasRequest on the wire: field mask " + Long.toHexString(mask));
      }
      if ((mask & 1L << 0) != 0) {
        r.setTransA(in.readEnum(Transpose.class));
      }
      if ((mask & 1L << 1) != 0) {
        r.setTransB(in.readEnum(Transpose.class));
      }
      if ((mask & 1L << 2) != 0) {
        r.setUplo(in.readEnum(FillMode.class));
      }
      if ((mask & 1L << 3) != 0) {
        r.setSide(in.readEnum(Side.class));
      }
      if ((mask & 1L << 4) != 0) {
        r.setDiag(in.readEnum(Diagonal.class));
      }
      if ((mask & 1L << 5) != 0) {
        r.setM(in.readInt());
      }
      if ((mask & 1L << 6) != 0) {
        r.setN(in.readInt());
      }
      if ((mask & 1L << 7) != 0) {
        r.setK(in.readInt());
      }
      if ((mask & 1L << 8) != 0) {
        r.setAlpha(in.readDouble());
      }
      if ((mask & 1L << 9) != 0) {
        r.setBeta(in.readDouble());
      }
      if ((mask & 1L << 10) != 0) {
        r.setA(in.readHandle());
      }
      if ((mask & 1L << 11) != 0) {
        r.setLda(in.readInt());
      }
      if ((mask & 1L << 12) != 0) {
        r.setB(in.readHandle());
      }
      if ((mask & 1L << 13) != 0) {
        r.setLdb(in.readInt());
      }
      if ((mask & 1L << 14) != 0) {
        r.setC(in.readHandle());
      }
      if ((mask & 1L << 15) != 0) {
        r.setLdc(in.readInt());
      }
      if ((mask & 1L << 16) != 0) {
        r.setX(in.readHandle());
      }
      if ((mask & 1L << 17) != 0) {
        r.setIncx(in.readInt());
      }
      if ((mask & 1L << 18) != 0) {
        r.setY(in.readHandle());
      }
      if ((mask & 1L << 19) != 0) {
        r.setIncy(in.readInt());
      }
      if ((mask & 1L << 20) != 0) {
        r.setStrideA(in.readLong());
      }
      if ((mask & 1L << 21) != 0) {
        r.setStrideB(in.readLong());
      }
      if ((mask & 1L << 22) != 0) {
        r.setStrideC(in.readLong());
      }
      if ((mask & 1L << 23) != 0) {
        r.setBatchCount(in.readInt());
      }
      if ((mask & 1L << 24) != 0) {
        r.setCosine(in.readDouble());
      }
      if ((mask & 1L << 25) != 0) {
        r.setSine(in.readDouble());
      }
      if ((mask & 1L << 26) != 0) {
        r.setTf32(in.readBoolean());
      }
      if ((mask & 1L << 27) != 0) {
        r.setAlphaImag(in.readDouble());
      }
      if ((mask & 1L << 28) != 0) {
        r.setBetaImag(in.readDouble());
      }
      if ((mask & 1L << 29) != 0) {
        r.setKl(in.readInt());
      }
      if ((mask & 1L << 30) != 0) {
        r.setKu(in.readInt());
      }
      if ((mask & 1L << 31) != 0) {
        r.setSineImag(in.readDouble());
      }
      if ((mask & 1L << 32) != 0) {
        r.setComputeType(in.readEnum(BlasComputeType.class));
      }
      if ((mask & 1L << 33) != 0) {
        r.setBatchA(readHandles(in));
      }
      if ((mask & 1L << 34) != 0) {
        r.setBatchB(readHandles(in));
      }
      if ((mask & 1L << 35) != 0) {
        r.setBatchC(readHandles(in));
      }
      return r;
    });

  // A handle list: whether there is one, then its size and its handles.
  private static void writeHandles(List<BufferHandle> handles, WireOut out) {
    out.writeBoolean(handles != null);
    if (handles == null) {
      return;
    }
    out.writeInt(handles.size());
    for (BufferHandle h : handles) {
      out.writeHandle(h);
    }
  }

  private static List<BufferHandle> readHandles(WireIn in) {
    if (!in.readBoolean()) {
      return null;
    }
    int n = in.readCount(BlasBatch.MAX_REQUESTS, 1); // each at least its tag byte
    List<BufferHandle> handles = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      handles.add(in.readHandle());
    }
    return handles;
  }

  public static final WireType<BlasReply> BLAS_REPLY = WireType.of(BlasReply.class, 2, // 2: valueImag
    (r, out) -> out.writeHandle(r.getOutput()).writeDouble(r.getValue()).writeDouble(r.getValueImag())
      .writeInt(r.getIndex()).writeInt(r.getBatchSize()),
    in -> new BlasReply().setOutput(in.readHandle()).setValue(in.readDouble()).setValueImag(in.readDouble())
      .setIndex(in.readInt()).setBatchSize(in.readInt()));

  public static final WireType<BlasBatch> BLAS_BATCH = WireType.of(BlasBatch.class, 3, // 2: handles by reference; 3: BlasRequest version 4
    (b, out) -> {
      List<BlasRequest> requests = b.getRequests() == null ? List.of() : b.getRequests();
      out.writeInt(requests.size());
      for (BlasRequest r : requests) {
        out.writeBoolean(r != null);
        if (r != null) {
          BLAS_REQUEST.write(r, out);
        }
      }
    },
    in -> {
      int n = in.readCount(BlasBatch.MAX_REQUESTS, 1); // each at least its presence byte
      List<BlasRequest> requests = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        requests.add(in.readBoolean() ? BLAS_REQUEST.read(in) : null);
      }
      return new BlasBatch(requests);
    });

  public static final WireType<BlasBatchReply> BLAS_BATCH_REPLY = WireType.of(BlasBatchReply.class, 3, // 2: handles by reference; 3: BlasReply version 2
    (b, out) -> {
      out.writeInt(b.getOutcomes().size());
      for (BlasOutcome o : b.getOutcomes()) {
        out.writeBoolean(o.succeeded());
        if (o.succeeded()) {
          BLAS_REPLY.write(o.getReply(), out);
        } else {
          out.writeEnum(o.getFailureCode()).writeString(o.getFailure());
        }
      }
    },
    in -> {
      int n = in.readCount(BlasBatch.MAX_REQUESTS, 1); // each at least its outcome byte
      List<BlasOutcome> outcomes = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        outcomes.add(in.readBoolean() ? BlasOutcome.of(BLAS_REPLY.read(in))
          : new BlasOutcome().setFailureCode(in.readEnum(FailureCode.class)).setFailure(in.readString()));
      }
      return new BlasBatchReply(outcomes);
    });

  public static final WireType<FftRequest> FFT_REQUEST = WireType.of(FftRequest.class, 2, // 2: handles by reference
    (r, out) -> {
      out.writeEnum(r.getType()).writeEnum(r.getDirection());
      writeInts(out, r.getN());
      out.writeInt(r.getBatch());
      writeInts(out, r.getInembed());
      out.writeLong(r.getIstride()).writeLong(r.getIdist());
      writeInts(out, r.getOnembed());
      out.writeLong(r.getOstride()).writeLong(r.getOdist()).writeHandle(r.getInput()).writeHandle(r.getOutput());
    },
    in -> new FftRequest().setType(in.readEnum(FftType.class)).setDirection(in.readEnum(FftDirection.class))
      .setN(readInts(in)).setBatch(in.readInt()).setInembed(readInts(in)).setIstride(in.readLong())
      .setIdist(in.readLong()).setOnembed(readInts(in)).setOstride(in.readLong()).setOdist(in.readLong())
      .setInput(in.readHandle()).setOutput(in.readHandle()));

  public static final WireType<FftReply> FFT_REPLY = WireType.of(FftReply.class, 1,
    (r, out) -> out.writeHandle(r.getOutput()).writeBoolean(r.isPlanReused()),
    in -> new FftReply(in.readHandle(), in.readBoolean()));

  public static final WireType<RandRequest> RAND_REQUEST = WireType.of(RandRequest.class, 1,
    (r, out) -> out.writeEnum(r.getGenerator()).writeLong(r.getSeed()).writeLong(r.getOffset())
      .writeInt(r.getDimensions()).writeEnum(r.getDistribution()).writeDouble(r.getMean())
      .writeDouble(r.getStddev()).writeDouble(r.getLambda()).writeHandle(r.getOutput()),
    in -> new RandRequest().setGenerator(in.readEnum(RngType.class)).setSeed(in.readLong()).setOffset(in.readLong())
      .setDimensions(in.readInt()).setDistribution(in.readEnum(Distribution.class)).setMean(in.readDouble())
      .setStddev(in.readDouble()).setLambda(in.readDouble()).setOutput(in.readHandle()));

  @Override
  public List<WireType<?>> wireTypes() {
    return List.of(BLAS_REQUEST, BLAS_REPLY, BLAS_BATCH, BLAS_BATCH_REPLY, FFT_REQUEST, FFT_REPLY, RAND_REQUEST);
  }

  private static void writeInts(WireOut out, List<Integer> values) {
    if (values == null) {
      out.writeInt(-1);
      return;
    }
    out.writeInt(values.size());
    for (Integer v : values) {
      out.writeInt(v == null ? 0 : v);
    }
  }

  private static List<Integer> readInts(WireIn in) {
    int n = in.readInt();
    if (n == -1) {
      return null;
    }
    if (n < 0 || n > MAX_LIST) {
      throw new WireFormatException("malformed FftRequest on the wire: a list of " + n + " sizes");
    }
    List<Integer> values = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      values.add(in.readInt());
    }
    return values;
  }
}
