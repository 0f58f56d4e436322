package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceState;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;

import static com.vertxcuda.device.TestDevices.floats;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(VertxExtension.class)
class RoundTripTest {

  private DeviceClient client;

  @BeforeEach
  void deploy(Vertx vertx, VertxTestContext ctx) {
    TestDevices.deploy(vertx, TestDevices.options()).onComplete(ctx.succeeding(id -> {
      client = DeviceClient.create(vertx);
      ctx.completeNow();
    }));
  }

  @Test
  void uploadCopyFillViewDownload(VertxTestContext ctx) {
    int n = 1024;
    float[] values = new float[n];
    for (int i = 0; i < n; i++) {
      values[i] = i * 0.5f;
    }
    float[] expected = values.clone();
    for (int i = 100; i < 150; i++) {
      expected[i] = 7.5f;
    }
    client.alloc(DType.F32, n).compose(a -> client.alloc(DType.F32, n).compose(b ->
        client.upload(a, floats(values))
          .compose(x -> client.copy(a, b))
          .compose(x -> client.fill(b.view(100, 50), 7.5))
          .compose(x -> Future.all(client.download(b), client.download(b.view(98, 4)), client.download(a)))))
      .onComplete(ctx.succeeding(all -> ctx.verify(() -> {
        assertArrayEquals(expected, floats((Buffer) all.resultAt(0)));
        assertArrayEquals(new float[] {49f, 49.5f, 7.5f, 7.5f}, floats((Buffer) all.resultAt(1)));
        assertArrayEquals(values, floats((Buffer) all.resultAt(2)));
        ctx.completeNow();
      })));
  }

  @Test
  void fillEveryDtype(VertxTestContext ctx) {
    // Complex dtypes take no fill (ArrayTransferTest checks the refusal).
    List<DType> real = java.util.Arrays.stream(DType.values()).filter(t -> !t.isComplex()).toList();
    List<Future<Buffer>> reads = new ArrayList<>();
    for (DType t : real) {
      reads.add(client.alloc(t, 33).compose(h -> client.fill(h, 3)).compose(h -> client.download(h)));
    }
    Future.all(reads).onComplete(ctx.succeeding(all -> ctx.verify(() -> {
      for (int i = 0; i < real.size(); i++) {
        DType t = real.get(i);
        Buffer b = all.resultAt(i);
        assertEquals(33 * t.size(), b.length(), t.name());
        for (int e = 0; e < 33; e++) {
          long bits = 0;
          for (int k = t.size() - 1; k >= 0; k--) {
            bits = (bits << 8) | (b.getByte(e * t.size() + k) & 0xFF);
          }
          assertEquals(3.0, t.decode(bits), t.name() + "[" + e + "]");
        }
      }
      ctx.completeNow();
    })));
  }

  @Test
  void sixtyFourBitIntegersFillExactly(VertxTestContext ctx) {
    long big = 0x1234_5678_9ABC_DEF1L;
    client.alloc(DType.I64, 5).compose(h -> client.fillInteger(h, big)).compose(client::download)
      .onComplete(ctx.succeeding(b -> ctx.verify(() -> {
        for (int i = 0; i < 5; i++) {
          assertEquals(big, b.getLongLE(i * 8));
        }
        ctx.completeNow();
      })));
  }

  @Test
  void statsCountBuffersAndServedRequests(VertxTestContext ctx) {
    client.alloc(DType.F64, 1000).compose(a -> client.alloc(DType.U8, 24).compose(b -> client.stats()
        .compose(s1 -> client.free(a).compose(x -> client.stats()).map(s2 -> List.of(s1, s2)))))
      .onComplete(ctx.succeeding(s -> ctx.verify(() -> {
        assertEquals(8024, s.get(0).getBytesAllocated());
        assertEquals(2, s.get(0).getBuffersAllocated());
        assertEquals(24, s.get(1).getBytesAllocated());
        assertEquals(1, s.get(1).getBuffersAllocated());
        assertEquals(s.get(0).getGeneration(), s.get(1).getGeneration(), "no rebuild in between");
        assertEquals(DeviceState.READY, s.get(1).getState());
        assertTrue(s.get(1).getOperationsServed() >= 4, "served " + s.get(1).getOperationsServed());
        assertTrue(s.get(1).getBackendTotalBytes() > 0);
        ctx.completeNow();
      })));
  }

  @Test
  void describeSaysWhatRunsWhere(VertxTestContext ctx) {
    client.describe().onComplete(ctx.succeeding(info -> ctx.verify(() -> {
      assertEquals(client.address(), info.getAddress());
      assertEquals(TestDevices.backend().name().toLowerCase(), info.getBackend());
      assertEquals(DeviceState.READY, info.getState());
      // Generations start from the clock (in µs), so they never repeat across redeployments.
      assertTrue(info.getGeneration() > 1_700_000_000_000_000L, "generation " + info.getGeneration());
      assertTrue(info.getTotalMemory() > 0);
      ctx.completeNow();
    })));
  }

  @Test
  void freeRightAfterUseKeepsTheDataOfOtherBuffers(VertxTestContext ctx) {
    float[] values = {1, 2, 3, 4};
    client.alloc(DType.F32, 4).compose(a -> client.alloc(DType.F32, 4).compose(b ->
        client.upload(a, floats(values)).compose(x -> {
          Future<BufferHandle> copy = client.copy(a, b);
          Future<Void> free = client.free(a);
          return Future.all(copy, free).compose(y -> client.download(b));
        })))
      .onComplete(ctx.succeeding(b -> ctx.verify(() -> {
        assertArrayEquals(values, floats(b));
        ctx.completeNow();
      })));
  }
}
