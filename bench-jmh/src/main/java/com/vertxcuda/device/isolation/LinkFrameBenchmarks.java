package com.vertxcuda.device.isolation;

import com.vertxcuda.message.FillRequest;
import com.vertxcuda.testing.CoreSamples;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.nio.ByteBuffer;

/**
 * The link between a device verticle and its device host: a request frame (a fill) encoded into the
 * thread's scratch buffer, and decoded on the other side. In {@code LinkFrame}'s package, which keeps
 * the frame format to itself.
 */
@State(Scope.Thread)
public class LinkFrameBenchmarks {

  private LinkFrame request;
  private ByteBuffer wire;

  @Setup
  public void setup() {
    request = LinkFrame.request(42, null, FillRequest.of(CoreSamples.HANDLE, 3.25), 1_000_000_000L, "a-node-id");
    ByteBuffer framed = request.encode();
    framed.getInt(); // the length prefix is the reader's, not the frame's
    wire = ByteBuffer.allocate(framed.remaining()).put(framed).flip();
  }

  @Benchmark
  public ByteBuffer encodeRequest() {
    return request.encode();
  }

  @Benchmark
  public Object decodeRequest() {
    return LinkFrame.decode(wire.duplicate());
  }
}
