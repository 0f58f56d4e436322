package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.message.FillRequest;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static com.vertxcuda.device.FailureCodesTest.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A fill's value is range-checked for every dtype: nothing saturates or wraps, NaN is no integer,
 * and a refused fill leaves the buffer as it was.
 */
@ExtendWith(VertxExtension.class)
class FillRangeTest {

  private DeviceClient client;
  private RequestSender raw;

  @BeforeEach
  void deploy(Vertx vertx, VertxTestContext ctx) {
    TestDevices.deploy(vertx, TestDevices.options()).onComplete(ctx.succeeding(id -> {
      client = DeviceClient.create(vertx);
      raw = new RequestSender(vertx, client.address(), 30_000);
      ctx.completeNow();
    }));
  }

  @Test
  void outOfRangeAndNaNAreBadRequestsAndTheBufferKeepsItsValues(VertxTestContext ctx) {
    Future.all(client.alloc(DType.I64, 4), client.alloc(DType.U64, 4), client.alloc(DType.I32, 4),
        client.alloc(DType.F16, 4), client.alloc(DType.U8, 4))
      .compose(all -> {
        BufferHandle i64 = all.resultAt(0);
        BufferHandle u64 = all.resultAt(1);
        BufferHandle i32 = all.resultAt(2);
        BufferHandle f16 = all.resultAt(3);
        BufferHandle u8 = all.resultAt(4);
        return client.fillInteger(i64, 7).compose(x -> client.fillInteger(u64, 7))
          .compose(x -> expect(client, FailureCode.BAD_REQUEST, "[-9223372036854775808, 9223372036854775807]",
            () -> client.fill(i64, 1e30)))
          .compose(x -> expect(client, FailureCode.BAD_REQUEST, "[0, 18446744073709551615]",
            () -> client.fill(u64, -1.0)))
          .compose(x -> expect(client, FailureCode.BAD_REQUEST, "[0, 18446744073709551615]",
            () -> client.fillInteger(u64, -1)))
          .compose(x -> expect(client, FailureCode.BAD_REQUEST, "as a long", () -> client.fill(i64, 0x1p60)))
          .compose(x -> expect(client, FailureCode.BAD_REQUEST, "not NaN", () -> client.fill(i32, Double.NaN)))
          .compose(x -> expect(client, FailureCode.BAD_REQUEST, "[-65504.0, 65504.0]", () -> client.fill(f16, 1e5)))
          .compose(x -> expect(client, FailureCode.BAD_REQUEST, "[0, 255]", () -> client.fill(u8, 256)))
          // Bits that do not fit one element, sent without the client's checks: refused by the device.
          .compose(x -> expect(client, FailureCode.BAD_REQUEST, "do not fit in one U8",
            () -> raw.request(new FillRequest(u8, 0x1FF))))
          .compose(x -> Future.all(client.download(i64), client.download(u64)))
          .map(d -> {
            Buffer a = d.resultAt(0);
            Buffer b = d.resultAt(1);
            for (int e = 0; e < 4; e++) {
              assertEquals(7L, a.getLongLE(e * 8));
              assertEquals(7L, b.getLongLE(e * 8));
            }
            return null;
          })
          // The edges of what is taken are exact.
          .compose(x -> client.fill(i64, -0x1p53)).compose(x -> client.fillInteger(u64, Long.MAX_VALUE))
          .compose(x -> Future.all(client.download(i64), client.download(u64)))
          .map(d -> {
            assertEquals(-(1L << 53), ((Buffer) d.resultAt(0)).getLongLE(8));
            assertEquals(Long.MAX_VALUE, ((Buffer) d.resultAt(1)).getLongLE(24));
            return null;
          });
      })
      .onComplete(ctx.succeedingThenComplete());
  }
}
