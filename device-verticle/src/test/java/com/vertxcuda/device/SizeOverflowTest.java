package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
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
import java.util.function.Supplier;

import static com.vertxcuda.device.FailureCodesTest.expect;

/**
 * Handles whose sizes overflow a long in bytes are bad requests in both isolation modes, and a
 * handle without its buffer's token is FORBIDDEN whatever shape it claims: the token is checked
 * before anything that depends on the buffer's size.
 */
@ExtendWith(VertxExtension.class)
class SizeOverflowTest {

  private static final long[] HUGE = {1L << 62, Long.MAX_VALUE, (1L << 61) + 3, Long.MAX_VALUE / 4 + 1};

  private DeviceClient client;

  @BeforeEach
  void deploy(Vertx vertx, VertxTestContext ctx) {
    TestDevices.deploy(vertx, TestDevices.options()).onComplete(ctx.succeeding(id -> {
      client = DeviceClient.create(vertx);
      ctx.completeNow();
    }));
  }

  private static BufferHandle claim(BufferHandle h, long tokenHigh, long count, long offset, long length) {
    return new BufferHandle(h.node(), h.device(), h.generation(), h.id(), h.dtype(), count, tokenHigh, h.tokenLow(),
      offset, length);
  }

  /** Every way a request can carry {@code bad}: download, upload, fill, copy from and to it. */
  private List<Supplier<Future<?>>> uses(BufferHandle bad, BufferHandle good) {
    List<Supplier<Future<?>>> uses = new ArrayList<>();
    uses.add(() -> client.download(bad));
    uses.add(() -> client.upload(bad, Buffer.buffer(new byte[8])));
    uses.add(() -> client.fill(bad, 1));
    uses.add(() -> client.copy(bad, good));
    uses.add(() -> client.copy(good, bad));
    return uses;
  }

  private Future<Void> expectAll(FailureCode code, String text, List<Supplier<Future<?>>> calls) {
    Future<Void> chain = Future.succeededFuture();
    for (Supplier<Future<?>> call : calls) {
      chain = chain.compose(x -> expect(client, code, text, call));
    }
    return chain;
  }

  @Test
  void hugeViewsAndCountsAreBadRequests(VertxTestContext ctx) {
    client.alloc(DType.F64, 16).compose(h -> client.alloc(DType.F64, 16).compose(good -> {
      List<Supplier<Future<?>>> calls = new ArrayList<>();
      for (long huge : HUGE) {
        calls.addAll(uses(claim(h, h.tokenHigh(), h.count(), 0, huge), good));
        calls.addAll(uses(claim(h, h.tokenHigh(), h.count(), huge, 2), good));
        calls.addAll(uses(claim(h, h.tokenHigh(), huge, 0, huge), good));
        calls.addAll(uses(claim(h, h.tokenHigh(), h.count(), -huge, 2), good));
      }
      // A clear refusal of the range (never the text of an overflowed arithmetic).
      return expectAll(FailureCode.BAD_REQUEST, "elements", calls);
    })).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void withoutTheTokenEveryShapeIsForbidden(VertxTestContext ctx) {
    client.alloc(DType.F64, 16).compose(h -> client.alloc(DType.F64, 16).compose(good -> {
      long wrong = h.tokenHigh() + 1;
      List<Supplier<Future<?>>> calls = new ArrayList<>();
      for (long huge : HUGE) {
        calls.addAll(uses(claim(h, wrong, h.count(), 0, huge), good));
        calls.addAll(uses(claim(h, wrong, huge, 0, huge), good));
        calls.addAll(uses(claim(h, wrong, h.count(), -huge, 2), good));
      }
      // Shapes that are merely wrong, not huge: still nothing but FORBIDDEN.
      calls.addAll(uses(claim(h, wrong, h.count(), 0, (Integer.MAX_VALUE / 8) + 1), good));
      calls.addAll(uses(claim(h, wrong, 1 << 20, 0, 1 << 20), good));
      calls.addAll(uses(claim(h, wrong, h.count(), 8, 16), good));
      calls.add(() -> client.upload(claim(h, wrong, h.count(), 0, h.count()), Buffer.buffer(new byte[3])));
      return expectAll(FailureCode.FORBIDDEN, "token", calls);
    })).onComplete(ctx.succeedingThenComplete());
  }
}
