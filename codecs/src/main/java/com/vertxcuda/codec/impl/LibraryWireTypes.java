package com.vertxcuda.codec.impl;

import com.vertxcuda.FailureCode;
import com.vertxcuda.blas.BlasBatch;
import com.vertxcuda.blas.BlasBatchReply;
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

  public static final WireType<BlasRequest> BLAS_REQUEST = WireType.of(BlasRequest.class, 2,
    (r, out) -> out.writeEnum(r.getOp()).writeEnum(r.getTransA()).writeEnum(r.getTransB()).writeEnum(r.getUplo())
      .writeEnum(r.getSide()).writeEnum(r.getDiag()).writeInt(r.getM()).writeInt(r.getN()).writeInt(r.getK())
      .writeDouble(r.getAlpha()).writeDouble(r.getBeta())
      .writeHandle(r.getA()).writeInt(r.getLda()).writeHandle(r.getB()).writeInt(r.getLdb())
      .writeHandle(r.getC()).writeInt(r.getLdc()).writeHandle(r.getX()).writeInt(r.getIncx())
      .writeHandle(r.getY()).writeInt(r.getIncy()).writeLong(r.getStrideA()).writeLong(r.getStrideB())
      .writeLong(r.getStrideC()).writeInt(r.getBatchCount()).writeDouble(r.getCosine()).writeDouble(r.getSine())
      .writeBoolean(r.isTf32()).writeDouble(r.getAlphaImag()).writeDouble(r.getBetaImag()),
    in -> new BlasRequest(in.readEnum(BlasOp.class)).setTransA(in.readEnum(Transpose.class))
      .setTransB(in.readEnum(Transpose.class)).setUplo(in.readEnum(FillMode.class)).setSide(in.readEnum(Side.class))
      .setDiag(in.readEnum(Diagonal.class)).setM(in.readInt()).setN(in.readInt()).setK(in.readInt())
      .setAlpha(in.readDouble()).setBeta(in.readDouble())
      .setA(in.readHandle()).setLda(in.readInt()).setB(in.readHandle()).setLdb(in.readInt())
      .setC(in.readHandle()).setLdc(in.readInt()).setX(in.readHandle()).setIncx(in.readInt())
      .setY(in.readHandle()).setIncy(in.readInt()).setStrideA(in.readLong()).setStrideB(in.readLong())
      .setStrideC(in.readLong()).setBatchCount(in.readInt()).setCosine(in.readDouble()).setSine(in.readDouble())
      .setTf32(in.readBoolean()).setAlphaImag(in.readDouble()).setBetaImag(in.readDouble()));

  public static final WireType<BlasReply> BLAS_REPLY = WireType.of(BlasReply.class, 1,
    (r, out) -> out.writeHandle(r.getOutput()).writeDouble(r.getValue()).writeInt(r.getIndex())
      .writeInt(r.getBatchSize()),
    in -> new BlasReply().setOutput(in.readHandle()).setValue(in.readDouble()).setIndex(in.readInt())
      .setBatchSize(in.readInt()));

  public static final WireType<BlasBatch> BLAS_BATCH = WireType.of(BlasBatch.class, 1,
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
      int n = readCount(in, BlasBatch.MAX_REQUESTS, "BlasBatch");
      List<BlasRequest> requests = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        requests.add(in.readBoolean() ? BLAS_REQUEST.read(in) : null);
      }
      return new BlasBatch(requests);
    });

  public static final WireType<BlasBatchReply> BLAS_BATCH_REPLY = WireType.of(BlasBatchReply.class, 1,
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
      int n = readCount(in, BlasBatch.MAX_REQUESTS, "BlasBatchReply");
      List<BlasOutcome> outcomes = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        outcomes.add(in.readBoolean() ? BlasOutcome.of(BLAS_REPLY.read(in))
          : new BlasOutcome().setFailureCode(in.readEnum(FailureCode.class)).setFailure(in.readString()));
      }
      return new BlasBatchReply(outcomes);
    });

  public static final WireType<FftRequest> FFT_REQUEST = WireType.of(FftRequest.class, 1,
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

  private static int readCount(WireIn in, int max, String type) {
    int n = in.readInt();
    if (n < 0 || n > max) {
      throw new WireFormatException("malformed " + type + " on the wire: a list of " + n + " entries");
    }
    return n;
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
