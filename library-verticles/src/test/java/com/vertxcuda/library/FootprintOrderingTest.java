package com.vertxcuda.library;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.PipelineHandle;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftType;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.LinkedHashMap;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Requests that touch no buffer of their own — a pipeline's release, a keep — keep their place behind
 * an earlier request of the same caller that waits for a preparation (a cuFFT plan, hundreds of ms on
 * the host): they declared they touched nothing, and overtook it.
 */
class FootprintOrderingTest extends HostDeviceTest {

  @Override
  protected boolean devicePerTest() {
    return true; // each test needs a plan not yet cached
  }

  private Map<String, Future<?>> inOneTask(Consumer<Map<String, Future<?>>> requests) {
    Promise<Map<String, Future<?>>> made = Promise.promise();
    vertx.runOnContext(v -> {
      Map<String, Future<?>> sent = new LinkedHashMap<>();
      requests.accept(sent);
      made.complete(sent);
    });
    Map<String, Future<?>> sent = await(made.future());
    await(Future.join(new ArrayList<>(sent.values())).otherwiseEmpty());
    return sent;
  }

  private static String outcome(Future<?> f) {
    return f.succeeded() ? "ok" : (f.cause() instanceof CudaException ? ((CudaException) f.cause()).code() + ": "
      + f.cause().getMessage() : String.valueOf(f.cause()));
  }

  /** replay(p) then release(p): the replay was sent first, so it must run (release's javadoc says so). */
  @Test
  void aReleaseDoesNotOvertakeAReplayWaitingBehindAPlan() {
    int n = (1 << 19) + 7; // Bluestein: its plan takes hundreds of ms on the host
    BufferHandle x = f32(floats(values(2 * n, 3)));
    BufferHandle y = await(device.alloc(DType.F32, 2L * n));
    PipelineHandle p = await(device.record().fill(y, 1).build());
    Map<String, Future<?>> sent = inOneTask(s -> {
      s.put("fft", fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(n), 1, x, y));
      s.put("replay", device.replay(p));
      s.put("release", device.release(p));
    });
    assertTrue(sent.get("fft").succeeded(), "fft: " + outcome(sent.get("fft")));
    assertTrue(sent.get("release").succeeded(), "release: " + outcome(sent.get("release")));
    assertTrue(sent.get("replay").succeeded(), "replay sent before release: " + outcome(sent.get("replay")));
    float[] out = readF32(y);
    assertEquals(1f, out[0], "y holds the replay's fill, after the FFT");
  }

  /** free(y) then keep(y): keep was made after the free, so it must see the buffer gone. */
  @Test
  void aKeepDoesNotOvertakeAFreeWaitingBehindAPlan() {
    int n = (1 << 19) + 9;
    BufferHandle x = f32(floats(values(2 * n, 4)));
    BufferHandle y = await(device.alloc(DType.F32, 2L * n));
    Map<String, Future<?>> sent = inOneTask(s -> {
      s.put("fft", fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(n), 1, x, y));
      s.put("free", device.free(y));
      s.put("keep", device.keep(y));
    });
    assertTrue(sent.get("fft").succeeded(), "fft: " + outcome(sent.get("fft")));
    assertTrue(sent.get("free").succeeded(), "free: " + outcome(sent.get("free")));
    assertTrue(sent.get("keep").failed(), "keep made after the free should find no buffer: " + outcome(sent.get("keep")));
  }
}
