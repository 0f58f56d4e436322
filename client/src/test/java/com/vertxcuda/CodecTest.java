package com.vertxcuda;

import com.vertxcuda.codec.CudaCodecs;
import com.vertxcuda.codec.RecordRequestJson;
import com.vertxcuda.codec.WireFormatException;
import com.vertxcuda.codec.WireType;
import com.vertxcuda.codec.WireCodec;
import com.vertxcuda.internal.CudaRuntime;
import com.vertxcuda.message.RecordRequest;
import com.vertxcuda.testing.CoreSamples;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.reflect.Method;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(VertxExtension.class)
class CodecTest {

  static final BufferHandle HANDLE = CoreSamples.HANDLE;

  /** One populated sample of every core message type. */
  static List<Object> samples() {
    return CoreSamples.all();
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
      Object back = sample instanceof RecordRequest ? RecordRequestJson.fromJson(json)
        : sample.getClass().getConstructor(JsonObject.class).newInstance(json);
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
    CudaRuntime.of(vertx).registerCodecs();
    CudaRuntime.of(vertx).registerCodecs(); // safe to call twice
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

  // A RecordRequest's JSON form names its steps' wire types: the codec package writes it.
  private static JsonObject json(Object o) throws Exception {
    if (o instanceof RecordRequest) {
      return RecordRequestJson.toJson((RecordRequest) o);
    }
    Method toJson = o.getClass().getMethod("toJson");
    return (JsonObject) toJson.invoke(o);
  }
}
