package com.vertxcuda;

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
import com.vertxcuda.codec.CudaCodecs;
import com.vertxcuda.codec.WireType;
import com.vertxcuda.codec.WireCodec;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftReply;
import com.vertxcuda.fft.FftRequest;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.codec.impl.LibraryWireTypes;
import com.vertxcuda.rand.Distribution;
import com.vertxcuda.rand.RandRequest;
import com.vertxcuda.rand.RngType;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The library messages cross a clustered bus intact, and the service file registers them. */
class LibraryWireTypesTest {

  private final BufferHandle handle = BufferHandle.issue("node", 1, 3, 9, DType.F32, 100).view(4, 50);

  private static <T> void roundTrip(WireType<T> type, T value, Function<T, JsonObject> json) {
    WireCodec<T> codec = CudaCodecs.codec(type);
    Buffer wire = Buffer.buffer();
    codec.encodeToWire(wire, value);
    assertEquals(json.apply(value), json.apply(codec.decodeFromWire(0, wire)), type.name());
    Buffer truncated = wire.getBuffer(0, wire.length() - 1);
    assertThrows(IllegalArgumentException.class, () -> codec.decodeFromWire(0, truncated));
  }

  @Test
  void everyLibraryMessageRoundTrips() {
    roundTrip(LibraryWireTypes.BLAS_REQUEST, new BlasRequest(BlasOp.TRSM).setTransA(Transpose.T).setUplo(FillMode.LOWER)
      .setSide(Side.RIGHT).setDiag(Diagonal.UNIT).setM(3).setN(4).setK(5).setAlpha(2.5).setBeta(-1).setA(handle)
      .setLda(7).setB(handle).setLdb(8).setX(handle).setIncx(2).setStrideA(11).setBatchCount(3).setCosine(0.5)
      .setSine(0.25).setTf32(true), BlasRequest::toJson);
    roundTrip(LibraryWireTypes.BLAS_REPLY, new BlasReply().setOutput(handle).setValue(3.5).setValueImag(-1.25).setIndex(7).setBatchSize(4),
      BlasReply::toJson);
    roundTrip(LibraryWireTypes.BLAS_BATCH, new BlasBatch(java.util.Arrays.asList(
      new BlasRequest(BlasOp.GEMM).setM(2).setN(3).setK(4).setA(handle).setB(handle).setC(handle).setLdc(9),
      new BlasRequest(BlasOp.DOT).setN(5).setX(handle).setY(handle))), BlasBatch::toJson);
    roundTrip(LibraryWireTypes.BLAS_BATCH_REPLY, new BlasBatchReply(List.of(
      BlasOutcome.of(new BlasReply().setOutput(handle).setBatchSize(2)),
      BlasOutcome.of(new CudaException(FailureCode.BAD_REQUEST, "ldc must be >= 2")),
      BlasOutcome.of(new BlasReply().setValue(1.5)))), BlasBatchReply::toJson);
    roundTrip(LibraryWireTypes.FFT_REQUEST, new FftRequest().setType(FftType.D2Z).setDirection(FftDirection.INVERSE)
      .setN(List.of(4, 8)).setBatch(3).setInembed(List.of(4, 10)).setIstride(2).setIdist(100).setOstride(1)
      .setOdist(40).setInput(handle).setOutput(handle), FftRequest::toJson);
    roundTrip(LibraryWireTypes.FFT_REPLY, new FftReply(handle, true), FftReply::toJson);
    roundTrip(LibraryWireTypes.RAND_REQUEST, new RandRequest().setGenerator(RngType.SOBOL32).setSeed(-5).setOffset(77)
      .setDimensions(3).setDistribution(Distribution.LOG_NORMAL).setMean(1).setStddev(2).setLambda(3)
      .setOutput(handle), RandRequest::toJson);
  }

  /**
   * A batch of 1,024 GEMMs read back: every handle as written, and every handle's node id one string
   * (the reader gives its last string again for the same bytes: one made per batch, not 3,072).
   */
  @Test
  void aLargeBatchReadsEveryHandleBackWithOneNodeString() {
    String node = "0f6c2a9e-4b1d-4c3e-9a7b-5d2e8f1c6a30";
    BufferHandle a = BufferHandle.issue(node, 0, 1, 1, DType.F32, 4096);
    BufferHandle b = BufferHandle.issue(node, 0, 1, 2, DType.F32, 4096);
    List<BlasRequest> requests = new java.util.ArrayList<>();
    for (int i = 0; i < 1024; i++) {
      requests.add(new BlasRequest(BlasOp.GEMM).setM(64).setN(64).setK(64).setA(a).setLda(64).setB(b).setLdb(64)
        .setC(BufferHandle.issue(node, 0, 1, 100 + i, DType.F32, 4096).view(i % 7, 64)).setLdc(64).setTf32(i % 2 == 0));
    }
    WireCodec<BlasBatch> codec = CudaCodecs.codec(LibraryWireTypes.BLAS_BATCH);
    Buffer wire = Buffer.buffer();
    codec.encodeToWire(wire, new BlasBatch(requests));
    List<BlasRequest> read = codec.decodeFromWire(0, wire).getRequests();
    assertEquals(1024, read.size());
    String first = read.get(0).getA().node();
    assertEquals(node, first);
    for (int i = 0; i < 1024; i++) {
      assertEquals(requests.get(i).toJson(), read.get(i).toJson(), "GEMM " + i);
      for (BufferHandle h : List.of(read.get(i).getA(), read.get(i).getB(), read.get(i).getC())) {
        org.junit.jupiter.api.Assertions.assertSame(first, h.node(), "GEMM " + i);
      }
    }
  }

  /**
   * A BLAS request carries only the fields that differ from a new request's: every field set away
   * from its default reads back as set (-0.0 and NaN by their bits, enums set to none as none), a
   * request left at its defaults reads back at them, and a batch of GEMMs on shared operands costs
   * under 160 bytes a GEMM (about 430 with every field and handle written out).
   */
  @Test
  void aBlasRequestCarriesWhatDiffersFromANewOne() {
    BufferHandle x = BufferHandle.issue("n", 0, 1, 4, DType.C64, 16);
    BufferHandle y = BufferHandle.issue("n", 0, 1, 5, DType.C64, 16);
    BlasRequest every = new BlasRequest(BlasOp.GEMM_STRIDED_BATCHED).setTransA(null).setTransB(Transpose.C)
      .setUplo(FillMode.LOWER).setSide(Side.RIGHT).setDiag(Diagonal.UNIT).setM(1).setN(2).setK(3).setAlpha(-0.0)
      .setBeta(Double.NaN).setA(handle).setLda(4).setB(x).setLdb(5).setC(y).setLdc(6).setX(x).setIncx(-1).setY(y)
      .setIncy(0).setStrideA(7).setStrideB(8).setStrideC(9).setBatchCount(10).setCosine(0.5).setSine(-0.5).setTf32(true)
      .setAlphaImag(1.5).setBetaImag(-2.5).setKl(11).setKu(12).setSineImag(0.125)
      .setComputeType(BlasComputeType.F32_FAST_TF32).setBatchA(List.of(x, handle)).setBatchB(List.of(y, y))
      .setBatchC(List.of());
    WireCodec<BlasRequest> codec = CudaCodecs.codec(LibraryWireTypes.BLAS_REQUEST);
    Buffer wire = Buffer.buffer();
    codec.encodeToWire(wire, every);
    BlasRequest read = codec.decodeFromWire(0, wire);
    assertEquals(every.toJson(), read.toJson());
    assertEquals(null, read.getTransA());
    assertEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(read.getAlpha()));
    assertTrue(Double.isNaN(read.getBeta()));
    assertEquals(-1, read.getIncx());
    assertEquals(0, read.getIncy());

    Buffer plain = Buffer.buffer();
    codec.encodeToWire(plain, new BlasRequest(BlasOp.AXPY));
    BlasRequest defaults = codec.decodeFromWire(0, plain);
    assertEquals(new BlasRequest(BlasOp.AXPY).toJson(), defaults.toJson());
    // The op and an empty mask after the codec's header.
    assertEquals(5 + 4 + "AXPY".length() + 8, plain.length());

    BufferHandle a = BufferHandle.issue("0f6c2a9e-4b1d-4c3e-9a7b-5d2e8f1c6a30", 0, 1, 1, DType.F32, 4096);
    BufferHandle b = BufferHandle.issue(a.node(), 0, 1, 2, DType.F32, 4096);
    List<BlasRequest> gemms = new java.util.ArrayList<>();
    for (int i = 0; i < 1024; i++) {
      gemms.add(new BlasRequest(BlasOp.GEMM).setM(64).setN(64).setK(64).setA(a).setLda(64).setB(b).setLdb(64)
        .setC(BufferHandle.issue(a.node(), 0, 1, 100 + i, DType.F32, 4096)).setLdc(64));
    }
    Buffer batch = Buffer.buffer();
    CudaCodecs.codec(LibraryWireTypes.BLAS_BATCH).encodeToWire(batch, new BlasBatch(gemms));
    assertTrue(batch.length() < 160 * 1024, batch.length() + " bytes for 1,024 GEMMs");
    List<BlasRequest> back = CudaCodecs.codec(LibraryWireTypes.BLAS_BATCH).decodeFromWire(0, batch).getRequests();
    for (int i = 0; i < 1024; i++) {
      assertEquals(gemms.get(i).toJson(), back.get(i).toJson(), "GEMM " + i);
    }
  }

  /**
   * The fields a {@code BlasRequest} on the wire leaves out stand for a new request's: this pins
   * those defaults, so changing one (which would change what an omitted field means between two
   * nodes) fails here first and comes with a bump of {@code BLAS_REQUEST}'s version.
   */
  @Test
  void aNewBlasRequestsDefaultsAreTheWiresMeaningOfAnOmittedField() {
    BlasRequest d = new BlasRequest();
    assertEquals((byte) 4, LibraryWireTypes.BLAS_REQUEST.version());
    assertEquals(List.of(Transpose.N, Transpose.N, FillMode.UPPER, Side.LEFT, Diagonal.NON_UNIT),
      java.util.Arrays.asList(d.getTransA(), d.getTransB(), d.getUplo(), d.getSide(), d.getDiag()));
    assertEquals(List.of(0, 0, 0, 0, 0, 0, 1, 1, 1), List.of(d.getM(), d.getN(), d.getK(), d.getLda(), d.getLdb(),
      d.getLdc(), d.getIncx(), d.getIncy(), d.getBatchCount()));
    assertEquals(List.of(0L, 0L, 0L), List.of(d.getStrideA(), d.getStrideB(), d.getStrideC()));
    assertEquals(List.of(1.0, 0.0, 0.0, 0.0, 1.0, 0.0), List.of(d.getAlpha(), d.getBeta(), d.getAlphaImag(),
      d.getBetaImag(), d.getCosine(), d.getSine()));
    assertEquals(java.util.Arrays.asList(null, null, null, null, null),
      java.util.Arrays.asList(d.getA(), d.getB(), d.getC(), d.getX(), d.getY()));
    assertEquals(false, d.isTf32());
    assertEquals(List.of(0, 0, 0.0, BlasComputeType.DEFAULT), List.of(d.getKl(), d.getKu(), d.getSineImag(),
      d.getComputeType()));
    assertEquals(java.util.Arrays.asList(null, null, null), java.util.Arrays.asList(d.getBatchA(), d.getBatchB(),
      d.getBatchC()));
  }

  @Test
  void theServiceFileContributesThem() {
    List<WireType<?>> all = CudaCodecs.wireTypes();
    for (Class<?> type : new Class<?>[] {BlasRequest.class, BlasReply.class, BlasBatch.class, BlasBatchReply.class,
      FftRequest.class, FftReply.class, RandRequest.class}) {
      assertTrue(all.stream().anyMatch(t -> t.type() == type), type.getSimpleName());
    }
  }
}
