package com.vertxcuda.device.isolation;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.Library;
import com.vertxcuda.blas.BlasBatch;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.message.FillRequest;
import com.vertxcuda.testing.CoreSamples;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The link between a device verticle and its device host: a request frame (a fill, and a batch of
 * 1,024 GEMMs) encoded into the thread's scratch buffer, and decoded on the other side. In
 * {@code LinkFrame}'s package, which keeps the frame format to itself.
 */
@State(Scope.Thread)
public class LinkFrameBenchmarks {

  private LinkFrame request;
  private ByteBuffer wire;
  private ByteBuffer gemms;
  private LinkFrame gemmFrame;

  @Setup
  public void setup() {
    request = LinkFrame.request(42, null, FillRequest.of(CoreSamples.HANDLE, 3.25), 1_000_000_000L, "a-node-id", false);
    wire = unframed(request);
    String node = "0f6c2a9e-4b1d-4c3e-9a7b-5d2e8f1c6a30";
    BufferHandle a = new BufferHandle(node, 0, 1, 1, DType.F32, 4096, 11, 12, 0, 16384);
    BufferHandle b = new BufferHandle(node, 0, 1, 2, DType.F32, 4096, 21, 22, 0, 16384);
    List<BlasRequest> batch = new ArrayList<>();
    for (int i = 0; i < 1024; i++) {
      BufferHandle c = new BufferHandle(node, 0, 1, 100 + i, DType.F32, 4096, 31 + i, 32 + i, 0, 16384);
      batch.add(new BlasRequest(BlasOp.GEMM).setM(64).setN(64).setK(64).setA(a).setLda(64).setB(b).setLdb(64)
        .setC(c).setLdc(64));
    }
    gemmFrame = LinkFrame.request(43, Library.BLAS, new BlasBatch(batch), 1_000_000_000L, node, false);
    gemms = unframed(gemmFrame);
  }

  private static ByteBuffer unframed(LinkFrame frame) {
    ByteBuffer framed = frame.encode();
    framed.getInt(); // the length prefix is the reader's, not the frame's
    return ByteBuffer.allocate(framed.remaining()).put(framed).flip();
  }

  @Benchmark
  public ByteBuffer encodeRequest() {
    return request.encode();
  }

  @Benchmark
  public Object decodeRequest() {
    return LinkFrame.decode(wire.duplicate());
  }

  /** A 1,024-GEMM frame encoded (on the caller's loop in process isolation). */
  @Benchmark
  public ByteBuffer encodeGemmBatch() {
    return gemmFrame.encode();
  }

  @Benchmark
  public Object decodeGemmBatch() {
    return LinkFrame.decode(gemms.duplicate());
  }
}
