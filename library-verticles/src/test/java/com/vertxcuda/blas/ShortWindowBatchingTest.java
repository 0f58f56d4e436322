package com.vertxcuda.blas;

import com.vertxcuda.device.TestDevices;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.library.HostDeviceTest;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

/** A sub-millisecond window, kept by re-checking on the verticle's thread. */
class ShortWindowBatchingTest extends HostDeviceTest {

  @Override
  protected DeviceOptions options() {
    return TestDevices.options().setLibraryOptions(new JsonObject()
      .put("blas", new JsonObject().put("batchWindow", 300)));
  }

  @Test
  void shortWindowGivesTheSameResults() {
    int n = 8;
    List<Future<BlasReply>> replies = new ArrayList<>();
    List<BufferHandle> cs = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      BufferHandle c = f64(new double[n * n]);
      cs.add(c);
      replies.add(blas.execute(new BlasRequest(BlasOp.GEMM).setM(n).setN(n).setK(n).setA(f64(values(n * n, i)))
        .setLda(n).setB(f64(values(n * n, 50 + i))).setLdb(n).setC(c).setLdc(n)));
    }
    await(Future.all(replies));
    for (int i = 0; i < 6; i++) {
      double[] expected = BlasVerticleTest.gemmReference(Transpose.N, Transpose.N, n, n, n, 1, values(n * n, i), n,
        values(n * n, 50 + i), n, 0, new double[n * n], n);
      assertClose(expected, readF64(cs.get(i)), 1e-12, "gemm " + i);
    }
  }
}
