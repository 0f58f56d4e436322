package com.vertxcuda.fft;


import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.device.TestDevices;
import com.vertxcuda.library.HostDeviceTest;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The FFT plan cache is bounded in bytes and its plans count against the device's memory limit:
 * large Bluestein plans (JTransforms keeps a chirp of 4x the padded size per plan: about 10 MiB for
 * n just above 2^17, 80 MiB just above 2^20) no longer pile up until the heap runs out.
 */
class FftPlanBudgetTest extends HostDeviceTest {

  @Override
  protected boolean devicePerTest() {
    return true; // each test counts the plans a fresh device holds
  }

  static final long MIB = 1 << 20;
  static final long BUDGET = 32 * MIB;
  static final long MEMORY_LIMIT = 64 * MIB;

  @Override
  protected DeviceOptions options() {
    return TestDevices.options().setMemoryLimit(MEMORY_LIMIT).setLibraryOptions(new JsonObject()
      .put("fft", new FftOptions().setPlanCacheSize(16).setPlanCacheBytes(BUDGET).toJson()));
  }

  private long fftBytes() {
    Long bytes = await(device.stats()).getLibraryBytes().get("fft");
    return bytes == null ? 0 : bytes;
  }

  private static long heapAfterGc() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /** An in-place C2C transform of size {@code n}. */
  private FftReply transform(int n, FftDirection direction, BufferHandle data) {
    return await(fft.execute(new FftRequest().setType(FftType.C2C).setDirection(direction).setN(List.of(n))
      .setBatch(1).setInput(data).setOutput(data)));
  }

  @Test
  void fourteenLargeBluesteinSizesKeepTheCacheWithinItsBudget() {
    boolean inProcess = TestDevices.isolation() == Isolation.IN_PROCESS;
    long heapBefore = heapAfterGc();
    long max = 0;
    for (int i = 0; i < 14; i++) {
      int n = (1 << 17) + 2 * i + 1; // odd sizes with large prime factors: Bluestein, ~10 MiB of plan each
      BufferHandle data = await(device.alloc(DType.F32, 2L * n));
      FftReply reply = transform(n, FftDirection.FORWARD, data);
      assertFalse(reply.isPlanReused(), "size " + n + " was never planned before");
      await(device.free(data));
      long bytes = fftBytes();
      assertTrue(bytes > 0, "the plan of size " + n + " is cached and counted");
      assertTrue(bytes <= BUDGET, "after " + (i + 1) + " sizes the FFT plans hold " + bytes
        + " bytes, over the " + BUDGET + "-byte budget");
      max = Math.max(max, bytes);
    }
    assertTrue(max > BUDGET / 2, "the budget is used (" + max + " bytes at most), not a count of plans");
    if (inProcess) {
      // Fourteen cached plans would be ~140 MiB; within the budget the heap grows by 32 MiB at most.
      long grown = heapAfterGc() - heapBefore;
      assertTrue(grown < BUDGET + 40 * MIB, "the heap grew by " + grown / MIB + " MiB after the requests were done");
    }
    // The most recent size is still cached and reused.
    int last = (1 << 17) + 2 * 13 + 1;
    BufferHandle data = await(device.alloc(DType.F32, 2L * last));
    assertTrue(transform(last, FftDirection.FORWARD, data).isPlanReused(), "the latest plan stays cached");
  }

  @Test
  void aPlanLargerThanTheBudgetRunsUncachedAndIsReleased() {
    // The sizes are those of JTransforms plans; cuFFT's work area for these lengths is far smaller.
    // The budget and limit logic (PlanCache, AllocationTable) is the same on both backends.
    org.junit.jupiter.api.Assumptions.assumeTrue(TestDevices.backend() == BackendKind.HOST,
      "plan sizes here are the host backend's");
    // A plan of ~20 MiB with its transform's ~20 MiB: over the 32 MiB budget, within the 64 MiB memory limit.
    int n = (1 << 18) + 3;
    double[] x = values(2 * n, 7);
    BufferHandle data = f32(floats(x));
    assertFalse(transform(n, FftDirection.FORWARD, data).isPlanReused());
    assertFalse(transform(n, FftDirection.INVERSE, data).isPlanReused(), "a plan over the budget is not kept");
    float[] back = readF32(data);
    for (int i = 0; i < back.length; i += 4099) {
      assertEquals((float) x[i] * n, back[i], 1e-3 * n, "inverse(forward(x)) = n x at " + i);
    }
    long deadline = System.currentTimeMillis() + 5_000;
    while (fftBytes() != 0 && System.currentTimeMillis() < deadline) {
      Thread.onSpinWait();
    }
    assertEquals(0, fftBytes(), "uncached plans are released once their transform is done");
  }

  @Test
  void aPlanOverTheMemoryLimitIsOutOfMemoryAndTheDeviceServesOn() {
    // The sizes are those of JTransforms plans; cuFFT's work area for these lengths is far smaller.
    // The budget and limit logic (PlanCache, AllocationTable) is the same on both backends.
    org.junit.jupiter.api.Assumptions.assumeTrue(TestDevices.backend() == BackendKind.HOST,
      "plan sizes here are the host backend's");
    int n = (1 << 20) + 3; // an 80 MiB plan: over the 64 MiB memory limit
    BufferHandle data = await(device.alloc(DType.F32, 2L * n));
    CudaException e = failure(fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(n), 1, data, data));
    assertEquals(FailureCode.OUT_OF_MEMORY, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains("memoryLimit"), "'" + e.getMessage() + "' names the limit");
    assertEquals(0, fftBytes(), "the refused plan holds nothing");
    await(device.free(data));
    BufferHandle small = f32(floats(values(16, 3)));
    assertFalse(transform(8, FftDirection.FORWARD, small).isPlanReused());
    assertTrue(fftBytes() > 0);
  }
}
