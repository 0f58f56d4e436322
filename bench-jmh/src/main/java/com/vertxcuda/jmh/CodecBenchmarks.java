package com.vertxcuda.jmh;

import com.vertxcuda.internal.VertxInternals;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.codec.CudaCodecs;
import com.vertxcuda.codec.WireType;
import com.vertxcuda.codec.WireCodec;
import com.vertxcuda.message.UploadRequest;
import com.vertxcuda.testing.CoreSamples;
import io.vertx.core.buffer.Buffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.util.ArrayList;
import java.util.List;

/**
 * The event-bus codecs of the toolkit's messages: encoding to the wire form and decoding it back,
 * for the requests that travel most (alloc, fill, upload of 1 KiB, a GEMM) and the replies that
 * come back (a download's bytes, stats).
 */
@State(Scope.Thread)
public class CodecBenchmarks {

  @Param({"AllocRequest", "FillRequest", "UploadRequest", "DownloadReply", "DeviceStats", "BlasRequest"})
  public String message;

  private WireCodec<Object> codec;
  private Object value;
  private Buffer encoded;
  private final Buffer out = Buffer.buffer(4096);

  @Setup
  @SuppressWarnings("unchecked")
  public void setup() {
    List<Object> samples = new ArrayList<>(CoreSamples.all());
    BufferHandle h = CoreSamples.HANDLE;
    samples.add(new BlasRequest(BlasOp.GEMM).setM(64).setN(64).setK(64).setA(h).setLda(64).setB(h).setLdb(64)
      .setC(BufferHandle.issue("node-1", 2, 7, 43, DType.F32, 4096)).setLdc(64));
    value = samples.stream().filter(s -> s.getClass().getSimpleName().equals(message)).findFirst()
      .orElseThrow(() -> new IllegalArgumentException("no sample of " + message));
    if (message.equals("UploadRequest")) {
      value = new UploadRequest(h.view(0, 256), Buffer.buffer(new byte[1024]));
    }
    for (WireType<?> t : CudaCodecs.wireTypes()) {
      if (t.type() == value.getClass()) {
        codec = (WireCodec<Object>) CudaCodecs.codec(t);
      }
    }
    encoded = Buffer.buffer();
    codec.encodeToWire(encoded, value);
  }

  @Benchmark
  public Buffer encode() {
    Buffer b = out;
    VertxInternals.byteBuf(b).clear();
    codec.encodeToWire(b, value);
    return b;
  }

  @Benchmark
  public Object decode() {
    return codec.decodeFromWire(0, encoded);
  }
}
