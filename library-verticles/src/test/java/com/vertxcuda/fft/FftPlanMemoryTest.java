package com.vertxcuda.fft;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.TestDevices;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Eight FFTs at once of sizes that each need a new Bluestein plan, in a 512 MiB heap (the surefire
 * execution {@code plan-memory} sets it): each plan with what its transform allocates takes about a
 * quarter of the heap, so the eight together would exhaust it several times over. Plans and their
 * transforms are counted before they are built, and plans outside the cache stay counted until
 * their work is done, so builds never run ahead of the transforms, however the threads are
 * scheduled. Each request is answered with the right transform or OUT_OF_MEMORY from a bound
 * checked before building (never the heap running out, never LIBRARY_ERROR), and the device serves
 * a small FFT afterwards.
 */
@ExtendWith(VertxExtension.class)
class FftPlanMemoryTest {

  private static final int REQUESTS = 8;

  @Test
  void concurrentLargePlansFitTheHeapOrAreOutOfMemory(Vertx vertx) throws Exception {
    assumeTrue(Boolean.getBoolean("vertxcuda.test.planMemory"), "runs in the plan-memory execution (512 MiB heap)");
    DeviceOptions options = TestDevices.options().setHostMemory(1L << 30).setRequestTimeout(120_000);
    get(vertx.deployVerticle(new DeviceVerticle(options)));
    DeviceClientOptions client = new DeviceClientOptions().setTimeout(120_000);
    DeviceClient device = DeviceClient.create(vertx, client);
    FftClient fft = FftClient.create(vertx, client);

    List<BufferHandle> buffers = new ArrayList<>();
    List<Future<BufferHandle>> transforms = new ArrayList<>();
    for (int j = 0; j < REQUESTS; j++) {
      int n = (1 << 19) + 7 + 2 * j;
      // A delta (fresh buffers are zero): its transform is all ones.
      BufferHandle h = get(device.alloc(DType.C128, n));
      get(device.upload(h.view(0, 1), new double[] {1, 0}));
      buffers.add(h);
    }
    for (int j = 0; j < REQUESTS; j++) {
      BufferHandle h = buffers.get(j);
      transforms.add(fft.transform(FftType.Z2Z, FftDirection.FORWARD, List.of((int) h.length()), 1, h, h));
    }
    int served = 0;
    for (int j = 0; j < REQUESTS; j++) {
      try {
        transforms.get(j).toCompletionStage().toCompletableFuture().get(180, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        CudaException failure = (CudaException) e.getCause();
        assertEquals(FailureCode.OUT_OF_MEMORY, failure.code(), "request " + j + ": " + failure.getMessage());
        // Refused by a bound checked before anything was built, not by a heap already exhausted.
        assertFalse(failure.getMessage().contains("ran out of memory"), "request " + j + ": " + failure.getMessage());
        continue;
      }
      served++;
      BufferHandle h = buffers.get(j);
      for (long at : new long[] {0, h.length() / 2, h.length() - 1000}) {
        double[] z = get(device.downloadDoubles(h.view(at, 1000)));
        for (int i = 0; i < z.length; i += 2) {
          assertEquals(1.0, z[i], 1e-6, "request " + j + ", element " + (at + i / 2) + " (real)");
          assertEquals(0.0, z[i + 1], 1e-6, "request " + j + ", element " + (at + i / 2) + " (imaginary)");
        }
      }
    }
    assertTrue(served > 0, "no request was served");
    for (BufferHandle h : buffers) {
      get(device.free(h));
    }

    BufferHandle small = get(device.alloc(DType.C128, 8));
    get(device.upload(small.view(0, 1), new double[] {1, 0}));
    get(fft.transform(FftType.Z2Z, FftDirection.FORWARD, List.of(8), 1, small, small));
    double[] ones = get(device.downloadDoubles(small));
    for (int i = 0; i < ones.length; i += 2) {
      assertEquals(1.0, ones[i], 1e-12);
      assertEquals(0.0, ones[i + 1], 1e-12);
    }
  }

  private static <T> T get(Future<T> f) throws Exception {
    try {
      return f.toCompletionStage().toCompletableFuture().get(180, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
    }
  }
}
