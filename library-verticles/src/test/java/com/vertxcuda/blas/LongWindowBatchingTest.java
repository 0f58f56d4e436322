package com.vertxcuda.blas;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.TestDevices;
import com.vertxcuda.library.HostDeviceTest;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A window asked for past the limit is taken as BlasOptions.MAX_BATCH_WINDOW (100 ms), not 10 s. */
class LongWindowBatchingTest extends HostDeviceTest {

  @Override
  protected DeviceOptions options() {
    return TestDevices.options().setLibraryOptions(new JsonObject()
      .put("blas", new BlasOptions().setBatchWindow(10_000_000).toJson()));
  }

  @Test
  void aLoneGemmIsAnsweredWhenTheCappedWindowCloses() {
    int n = 4;
    BufferHandle c = f64(new double[n * n]);
    BufferHandle a = f64(values(n * n, 1));
    BufferHandle b = f64(values(n * n, 2));
    long start = System.nanoTime();
    BlasReply reply = await(blas.execute(new BlasRequest(BlasOp.GEMM).setM(n).setN(n).setK(n).setA(a).setLda(n)
      .setB(b).setLdb(n).setC(c).setLdc(n)));
    long millis = (System.nanoTime() - start) / 1_000_000;
    assertTrue(millis >= 90 && millis < 2_000, "answered after " + millis + " ms");
    assertEquals(1, reply.getBatchSize());
    double[] expected = BlasVerticleTest.gemmReference(Transpose.N, Transpose.N, n, n, n, 1, values(n * n, 1), n,
      values(n * n, 2), n, 0, new double[n * n], n);
    assertClose(expected, readF64(c), 1e-12, "gemm");
  }
}
