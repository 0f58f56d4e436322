package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A slice of a downloaded buffer stays what was downloaded after the download itself is dropped and
 * collected, and the memory under it is not handed to the next download of the same size (it was,
 * through the pools, when the memory returned with the Buffer wrapper).
 */
@ExtendWith(VertxExtension.class)
@Tag("runs-once") // every test runs in both isolation modes itself
class DownloadLifetimeTest {

  @ParameterizedTest
  @EnumSource(value = Isolation.class, names = {"IN_PROCESS", "PROCESS"})
  void aSliceKeepsItsBytesAfterTheDownloadIsCollected(Isolation isolation, Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    int n = 1 << 18; // 1 MiB: lent from the pool or the region, not copied out
    TestDevices.deploy(vertx, TestDevices.options().setIsolation(isolation))
      .compose(id -> Future.all(c.alloc(DType.F32, n), c.alloc(DType.F32, n)))
      .compose(all -> {
        BufferHandle x = all.resultAt(0);
        BufferHandle y = all.resultAt(1);
        return Future.all(c.fill(x, 1), c.fill(y, 2))
          .compose(v -> c.download(x).map(b -> b.slice(0, 64)))
          .compose(slice -> {
            List<Future<Buffer>> later = new ArrayList<>();
            // Rounds of: collect, give the cleaner a moment (it runs on its own thread), download y.
            Future<?> chain = Future.succeededFuture();
            for (int round = 0; round < 8; round++) {
              chain = chain.compose(v -> {
                System.gc();
                return vertx.timer(30);
              }).compose(v -> {
                Future<Buffer> f = c.download(y);
                later.add(f);
                return f;
              });
            }
            return chain.map(v -> {
              for (int i = 0; i < 16; i++) {
                assertEquals(1f, slice.getFloatLE(i * 4), "element " + i + " of the slice");
              }
              return later;
            });
          });
      })
      .onComplete(ctx.succeeding(later -> ctx.verify(() -> {
        assertEquals(2f, later.get(7).result().getFloatLE(0));
        ctx.completeNow();
      })));
  }
}
