package com.vertxcuda.library;

import com.vertxcuda.device.TestDevices;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.FailureCode;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.DeviceEvent;
import org.junit.jupiter.api.Test;

import java.util.List;
import org.junit.jupiter.api.Assumptions;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** A poisoned context takes its library verticles with it; the next generation's serve again. */
class ContextLossTest extends HostDeviceTest {

  @Override
  protected boolean devicePerTest() {
    return true; // its test poisons the device
  }

  @Override
  protected DeviceOptions options() {
    return TestDevices.options();
  }

  @Test
  void librariesComeBackWithTheNextGeneration() {
    Assumptions.assumeTrue(TestDevices.poisonRebuilds(), TestDevices.POISON_ENDS_CUDA);
    BufferHandle before = f32(1, 2, 3, 4);
    await(fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(2), 1, before, f32(0, 0, 0, 0)));
    DeviceEvent event = poisonAndAwaitTheNextGeneration();
    assertEquals(event.getOldGeneration() + 1, event.getNewGeneration());

    assertEquals(FailureCode.STALE_HANDLE, failure(blas.asum(4, before, 1)).code(), "old handles are stale");
    BufferHandle after = f32(1, -2, 3, -4);
    assertEquals(10.0, await(BlasClient.create(vertx).asum(4, after, 1)), 1e-6);
    BufferHandle spectrum = f32(0, 0, 0, 0);
    await(fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(2), 1, after, spectrum));
    assertArrayEquals(new float[] {4, -6, -2, 2}, readF32(spectrum), "a new FFT verticle with a fresh plan cache");
  }
}
