package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.DeviceStats;
import com.vertxcuda.message.FaultRequest;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A buffer a client gets reads as zeros until written, even where its memory held another owner's
 * data a moment before (the cuda backend reuses freed blocks of the same size class). Runs on the
 * backend and isolation the suite is set to, so the GPU bundle checks it on cuda in both modes.
 */
@ExtendWith(VertxExtension.class)
class ZeroedAllocationTest {

  private DeviceClient client;

  @BeforeEach
  void deploy(Vertx vertx, VertxTestContext ctx) {
    TestDevices.deploy(vertx, TestDevices.options()).onComplete(ctx.succeeding(id -> {
      client = DeviceClient.create(vertx);
      ctx.completeNow();
    }));
  }

  @ParameterizedTest
  @ValueSource(ints = {1_024, 262_144, 16_777_216})
  void aBufferAllocatedAfterAnotherOwnersFreeReadsZeros(int n, VertxTestContext ctx) {
    // The host backend never reuses memory: its largest case proves nothing the smaller ones do not.
    assumeTrue(n < 1 << 24 || TestDevices.backend() == BackendKind.CUDA, "the 64 MiB case runs on cuda");
    client.alloc(DType.F32, n)
      .compose(first -> client.fill(first, 7.0).compose(x -> client.free(first)))
      .compose(x -> client.alloc(DType.F32, n))
      .compose(second -> client.downloadFloats(second))
      .onComplete(ctx.succeeding(values -> ctx.verify(() -> {
        assertEquals(n, values.length);
        assertEquals(-1, firstNonZero(values), "the first element that is not zero");
        ctx.completeNow();
      })));
  }

  /** A smaller buffer in a block of a larger size class: its bytes and the block's tail read as zeros once regrown. */
  @Test
  void theTailOfAReusedBlockReadsZerosToo(VertxTestContext ctx) {
    client.alloc(DType.U8, 4_096)
      .compose(big -> client.fill(big, 255).compose(x -> client.free(big)))
      .compose(x -> client.alloc(DType.U8, 4_000))
      .compose(small -> client.download(small).compose(bytes -> client.free(small).map(bytes)))
      .compose(smallBytes -> client.alloc(DType.U8, 4_096).compose(client::download)
        .map(bigBytes -> new Buffer[] {smallBytes, bigBytes}))
      .onComplete(ctx.succeeding(both -> ctx.verify(() -> {
        assertEquals(4_000, both[0].length());
        assertEquals(-1, firstNonZero(both[0]), "the first byte of 4,000 that is not zero");
        assertEquals(4_096, both[1].length());
        assertEquals(-1, firstNonZero(both[1]), "the first byte of 4,096 that is not zero");
        ctx.completeNow();
      })));
  }

  /** A write queued right after the allocation lands after the zeroing, never under it. */
  @Test
  void aFillRightAfterTheAllocationIsNotUndoneByTheZeroing(VertxTestContext ctx) {
    int n = 4 << 20;
    client.alloc(DType.F32, n)
      .compose(first -> client.fill(first, 3.0).compose(x -> client.free(first)))
      .compose(x -> client.alloc(DType.F32, n))
      .compose(second -> {
        Future<BufferHandle> filled = client.fill(second, 5.0);
        return filled.compose(client::downloadFloats);
      })
      .onComplete(ctx.succeeding(values -> ctx.verify(() -> {
        for (int i = 0; i < values.length; i += 4_093) {
          assertEquals(5.0f, values[i], "element " + i);
        }
        assertEquals(5.0f, values[values.length - 1]);
        ctx.completeNow();
      })));
  }

  /** The opt-in that skips the zeroing still gives a buffer of the size asked, that holds what is written. */
  @Test
  void anUninitializedBufferHoldsWhatIsWritten(VertxTestContext ctx) {
    float[] data = {1.5f, -2f, 3.25f, 0f, 8f};
    client.allocUninitialized(DType.F32, data.length)
      .compose(h -> client.upload(h, data))
      .compose(client::downloadFloats)
      .onComplete(ctx.succeeding(values -> ctx.verify(() -> {
        assertArrayEquals(data, values);
        ctx.completeNow();
      })));
  }

  /**
   * An allocation whose zeroing fails is answered with that failure and its memory goes back: a
   * buffer is never handed out unzeroed. The host backend fails the next queued operation on demand.
   */
  @Test
  void anAllocationWhoseZeroingFailsIsAnsweredWithTheFailure(Vertx vertx, VertxTestContext ctx) {
    assumeTrue(TestDevices.backend() == BackendKind.HOST, "the host backend fails a queued operation on demand");
    TestDevices.fault(vertx, client.address(), FaultRequest.Kind.FAIL_NEXT_OPERATION)
      .compose(x -> client.alloc(DType.F32, 1_024))
      .onComplete(ar -> ctx.verify(() -> {
        assertTrue(ar.failed(), "the allocation whose zeroing failed was handed out");
        assertEquals(FailureCode.LIBRARY_ERROR, Failures.codeOf(ar.cause()), ar.cause().getMessage());
      }))
      .recover(x -> client.alloc(DType.F32, 1_024))
      .compose(client::downloadFloats)
      .compose(values -> client.stats().map(stats -> new Object[] {values, stats}))
      .onComplete(ctx.succeeding(both -> ctx.verify(() -> {
        assertEquals(-1, firstNonZero((float[]) both[0]), "the next allocation reads zeros");
        assertEquals(1, ((DeviceStats) both[1]).getBuffersAllocated(), "the failed one went back");
        ctx.completeNow();
      })));
  }

  private static int firstNonZero(float[] values) {
    for (int i = 0; i < values.length; i++) {
      if (Float.floatToRawIntBits(values[i]) != 0) {
        return i;
      }
    }
    return -1;
  }

  private static int firstNonZero(Buffer bytes) {
    for (int i = 0; i < bytes.length(); i++) {
      if (bytes.getByte(i) != 0) {
        return i;
      }
    }
    return -1;
  }
}
