package com.vertxcuda.samples;

import com.vertxcuda.DeviceClient;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The FFT convolution sample on device 0 (cuda where a GPU is usable, else the host backend), in
 * both isolations: one recording, replayed for several signals, matches the direct convolution
 * computed here in double precision.
 */
class FftConvolutionTest {

  private Vertx vertx;

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void stop() throws Exception {
    await(vertx.close());
  }

  @Test
  void replaysMatchTheDirectConvolutionInProcess() throws Exception {
    replaysMatchTheDirectConvolution(Isolation.IN_PROCESS);
  }

  @Test
  void replaysMatchTheDirectConvolutionInADeviceHost() throws Exception {
    replaysMatchTheDirectConvolution(Isolation.PROCESS);
  }

  private void replaysMatchTheDirectConvolution(Isolation isolation) throws Exception {
    await(vertx.deployVerticle(new DeviceVerticle(new DeviceOptions().setIsolation(isolation))));
    DeviceClient device = DeviceClient.create(vertx);
    Random random = new Random(7);
    float[] filter = values(random, 31);
    int maxSignal = 200;
    FftConvolution conv = await(FftConvolution.create(vertx, device, filter, maxSignal));
    for (int length : new int[] {200, 57, 1, 200}) {
      float[] signal = values(random, length);
      float[] got = await(conv.convolve(signal));
      double[] expected = direct(signal, filter);
      assertEquals(expected.length, got.length, "length of signal " + length + " convolved");
      for (int i = 0; i < expected.length; i++) {
        // An F32 FFT of ~230 points: errors of a few ulps of the largest partial sums.
        assertEquals(expected[i], got[i], 1e-4 * filter.length, "signal of " + length + ", value " + i);
      }
    }
    await(conv.close());
  }

  private static double[] direct(float[] signal, float[] filter) {
    double[] out = new double[signal.length + filter.length - 1];
    for (int i = 0; i < signal.length; i++) {
      for (int j = 0; j < filter.length; j++) {
        out[i + j] += (double) signal[i] * filter[j];
      }
    }
    return out;
  }

  private static float[] values(Random random, int n) {
    float[] v = new float[n];
    for (int i = 0; i < n; i++) {
      v[i] = random.nextFloat() * 2 - 1;
    }
    return v;
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }
}
