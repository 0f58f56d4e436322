package com.vertxcuda;

import com.vertxcuda.codec.CudaCodecs;
import com.vertxcuda.codec.WireFormatException;
import com.vertxcuda.codec.WireType;
import com.vertxcuda.codec.impl.WireCodec;
import com.vertxcuda.message.AllocRequest;
import com.vertxcuda.message.CopyRequest;
import com.vertxcuda.message.DescribeRequest;
import com.vertxcuda.message.DeviceEvent;
import com.vertxcuda.message.DeviceInfo;
import com.vertxcuda.message.DeviceState;
import com.vertxcuda.message.DeviceStats;
import com.vertxcuda.message.DownloadReply;
import com.vertxcuda.message.DownloadRequest;
import com.vertxcuda.message.FaultRequest;
import com.vertxcuda.message.FillRequest;
import com.vertxcuda.message.FreeRequest;
import com.vertxcuda.message.StatsRequest;
import com.vertxcuda.message.UploadRequest;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(VertxExtension.class)
class CodecTest {

  static final BufferHandle HANDLE = BufferHandle.issue("node-1", 2, 7, 42, DType.F32, 1000);

  /** One populated sample of every core message type. */
  static List<Object> samples() {
    Map<String, Long> failures = new HashMap<>();
    failures.put("NOT_FOUND", 3L);
    return List.of(
      HANDLE,
      HANDLE.view(10, 20),
      new AllocRequest(DType.BF16, 123, "owner-node"),
      new FreeRequest(HANDLE),
      new UploadRequest(HANDLE.view(0, 2), Buffer.buffer().appendFloatLE(1.5f).appendFloatLE(-2f)),
      new DownloadRequest(HANDLE),
      new DownloadReply(HANDLE, Buffer.buffer(new byte[] {1, 2, 3, 4})),
      new CopyRequest(HANDLE, HANDLE.view(5, 5)),
      FillRequest.of(HANDLE, 3.25),
      new StatsRequest(),
      new DescribeRequest(),
      new DeviceStats().setGeneration(3).setState(DeviceState.READY).setBytesAllocated(4096)
        .setBuffersAllocated(2).setCachedBytes(512).setBackendFreeBytes(1 << 20).setBackendTotalBytes(1 << 30)
        .setInFlight(1).setQueueDepth(4).setOperationsServed(99).setFailuresByCode(failures).setSpareReady(true)
        .setLibraryBytes(Map.of("fft", 3L << 20, "kernel", 4096L)),
      new DeviceInfo().setNode("n").setDevice(1).setAddress("vertx-cuda.n.1").setName("NVIDIA H200")
        .setBackend("cuda").setIsolation("process").setComputeCapability("9.0").setTotalMemory(1L << 37)
        .setGeneration(4).setState(DeviceState.REBUILDING).setLoad(12).setPid(4242).setLibraries(List.of("blas", "fft")),
      new DeviceEvent(DeviceEvent.Type.GENERATION_CHANGED, "n", 0, 1, 2, "CUDA_ERROR_ILLEGAL_ADDRESS"),
      new FaultRequest(FaultRequest.Kind.POISON));
  }

  @Test
  void everyMessageTypeHasACodec() {
    for (Object sample : samples()) {
      assertTrue(CudaCodecs.wireTypes().stream().anyMatch(t -> t.type() == sample.getClass()),
        "no codec for " + sample.getClass().getSimpleName());
    }
  }

  @Test
  void wireRoundTripGivesAnEqualObject() throws Exception {
    for (Object sample : samples()) {
      WireCodec<Object> codec = codecFor(sample);
      Buffer wire = Buffer.buffer().appendString("prefix");
      codec.encodeToWire(wire, sample);
      Object decoded = codec.decodeFromWire(6, wire);
      assertEquals(sample.getClass(), decoded.getClass());
      assertEquals(json(sample), json(decoded), sample.getClass().getSimpleName());
      if (sample instanceof BufferHandle) {
        assertEquals(sample, decoded);
      }
    }
  }

  @Test
  void jsonFormRoundTrips() throws Exception {
    for (Object sample : samples()) {
      JsonObject json = json(sample);
      Object back = sample.getClass().getConstructor(JsonObject.class).newInstance(json);
      assertEquals(json, json(back), sample.getClass().getSimpleName());
    }
  }

  @Test
  void malformedWireBytesGiveAClearError() {
    for (Object sample : samples()) {
      WireCodec<Object> codec = codecFor(sample);
      Buffer wire = Buffer.buffer();
      codec.encodeToWire(wire, sample);
      String name = sample.getClass().getSimpleName();
      // Truncated: the header claims more bytes than there are.
      Buffer truncated = wire.getBuffer(0, wire.length() - 1);
      WireFormatException e = assertThrows(WireFormatException.class, () -> codec.decodeFromWire(0, truncated));
      assertTrue(e.getMessage().contains(name), e.getMessage());
      // Unknown format version.
      Buffer badVersion = wire.copy();
      badVersion.setByte(4, (byte) 99);
      e = assertThrows(WireFormatException.class, () -> codec.decodeFromWire(0, badVersion));
      assertTrue(e.getMessage().contains("version 99"), e.getMessage());
      // Garbage payload of a plausible length (version 1, three bytes of nonsense).
      Buffer garbage = Buffer.buffer().appendInt(4).appendByte((byte) 1)
        .appendByte((byte) 0x7f).appendByte((byte) 0x7f).appendByte((byte) 0x7f);
      assertThrows(WireFormatException.class, () -> codec.decodeFromWire(0, garbage), name);
      // Too short for a header.
      assertThrows(WireFormatException.class, () -> codec.decodeFromWire(0, Buffer.buffer(new byte[] {0, 0})));
    }
  }

  @Test
  void localDeliveryHandsOverTheSameInstance(Vertx vertx, VertxTestContext ctx) {
    CudaCodecs.register(vertx.eventBus());
    CudaCodecs.register(vertx.eventBus()); // safe to call twice
    List<Object> samples = samples();
    vertx.eventBus().consumer("codec-test", m -> m.reply(m.body()));
    io.vertx.core.Future<?> chain = io.vertx.core.Future.succeededFuture();
    for (Object sample : samples) {
      chain = chain.compose(x -> vertx.eventBus().request("codec-test", sample)
        .map(reply -> {
          ctx.verify(() -> assertSame(sample, reply.body()));
          return null;
        }));
    }
    chain.onComplete(ctx.succeedingThenComplete());
  }

  @SuppressWarnings("unchecked")
  private static WireCodec<Object> codecFor(Object sample) {
    WireType<?> type = CudaCodecs.wireTypes().stream().filter(t -> t.type() == sample.getClass()).findFirst()
      .orElseThrow();
    return (WireCodec<Object>) CudaCodecs.codec(type);
  }

  private static JsonObject json(Object o) throws Exception {
    Method toJson = o.getClass().getMethod("toJson");
    return (JsonObject) toJson.invoke(o);
  }
}
