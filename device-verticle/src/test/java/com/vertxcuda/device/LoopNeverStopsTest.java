package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Tag;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A large transfer made from an event loop never stops that loop: a 1 ms periodic timer on it keeps
 * firing while the transfer runs (every kind: Buffer, array, NIO; up and down). 64 MiB (eight local
 * chunks) on the host backend (the gap allowed: 100 ms, for a 2-core CI host), 1 GiB on cuda (10 ms), beyond what stopped
 * every thread of the JVM at the same time (a plain thread ticking beside the loop measures that: a
 * collector's pause, or a safepoint held up by a thread zeroing a new 1 GiB array, which the JVM
 * does in one go).
 */
@ExtendWith(VertxExtension.class)
@Tag("alone")
class LoopNeverStopsTest {

  enum Kind { UPLOAD_BUFFER, UPLOAD_ARRAY, UPLOAD_NIO, DOWNLOAD_BUFFER, DOWNLOAD_ARRAY, DOWNLOAD_NIO }

  static boolean cuda() {
    return TestDevices.backend() == BackendKind.CUDA;
  }

  static final int BYTES = cuda() ? 1 << 30 : 64 << 20;
  static final long ALLOWED_GAP_MS = cuda() ? 10 : 100;

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aTimerOnTheCallersLoopKeepsFiring(Kind kind, Vertx vertx) throws Exception {
    get(TestDevices.deploy(vertx, TestDevices.options()));
    DeviceClient c = DeviceClient.create(vertx);
    int floats = BYTES / 4;
    BufferHandle h = get(c.alloc(DType.F32, floats));
    // The host data is made here, on the test's thread, not on the loop.
    float[] array = new float[floats];
    for (int i = 0; i < floats; i += 1024) {
      array[i] = i;
    }
    ByteBuffer nio = ByteBuffer.allocateDirect(BYTES).order(ByteOrder.LITTLE_ENDIAN);
    nio.asFloatBuffer().put(array);
    Buffer buffer = Buffer.buffer(BYTES);
    buffer.setBytes(0, nio.duplicate());
    if (kind.name().startsWith("DOWNLOAD")) {
      get(c.upload(h, array));
    }
    java.nio.FloatBuffer landing = ByteBuffer.allocateDirect(BYTES).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
    Function<DeviceClient, Future<?>> transfer;
    switch (kind) {
      case UPLOAD_BUFFER: transfer = d -> d.upload(h, buffer); break;
      case UPLOAD_ARRAY: transfer = d -> d.upload(h, array); break;
      case UPLOAD_NIO: transfer = d -> d.upload(h, (java.nio.Buffer) nio.duplicate().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer()); break;
      case DOWNLOAD_BUFFER: transfer = d -> d.download(h); break;
      case DOWNLOAD_ARRAY: transfer = d -> d.downloadFloats(h); break;
      default: transfer = d -> d.downloadInto(h, landing).map(x -> landing);
    }
    long[] startedAt = new long[1];
    // Read before the window: the first read starts the JVM's management beans, which held up a
    // safepoint for 130 ms on the H200 (the test's own thread, not the toolkit's).
    long gcBefore = com.vertxcuda.internal.LoopGaps.collectorMillis();
    // What stops every thread of the JVM (a collector's pause, a safepoint that waits for a thread
    // zeroing or copying a large block, a starved CPU) stops LoopGaps' control too; what stops only
    // the caller's loop is the toolkit's doing. The gap the call itself took on the loop counts too.
    com.vertxcuda.internal.LoopGaps gaps = new com.vertxcuda.internal.LoopGaps(vertx);
    CompletableFuture<Object> done = gaps.during(vertx.getOrCreateContext(), () -> {
      startedAt[0] = System.nanoTime();
      return transfer.apply(c).map(r -> (Object) r);
    });
    Object result = done.get(120, TimeUnit.SECONDS);
    long gc = com.vertxcuda.internal.LoopGaps.collectorMillis() - gcBefore;
    double seconds = (System.nanoTime() - startedAt[0]) / 1e9;
    double widestMs = gaps.widestMs();
    double controlMs = gaps.controlMs();
    System.out.printf("[figure] loop during a %d MiB %s (%s, %s): widest timer gap %.1f ms (a plain thread beside it: "
      + "%.1f ms; the JVM's collectors: %d ms meanwhile), %.2f GB/s%n", BYTES >> 20, kind, TestDevices.backend(),
      TestDevices.isolation(), widestMs, controlMs, gc, BYTES / seconds / 1e9);
    if (result instanceof java.nio.FloatBuffer) {
      assertEquals(array[floats - 1024], ((java.nio.FloatBuffer) result).get(floats - 1024), 0);
    } else if (result instanceof float[]) {
      assertEquals(array[floats - 1024], ((float[]) result)[floats - 1024], 0);
    } else if (result instanceof Buffer) {
      assertEquals(array[floats - 1024], ((Buffer) result).getFloatLE((floats - 1024) * 4), 0);
    }
    // The loop may stop as long as every thread did (the JVM's pauses are not the toolkit's), plus the allowance.
    assertTrue(widestMs <= ALLOWED_GAP_MS + controlMs, kind + ": the caller's loop stopped for " + widestMs
      + " ms, while a plain thread beside it stopped at most " + controlMs + " ms");
    get(c.free(h));
  }

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }
}
