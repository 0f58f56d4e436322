package com.vertxcuda.library;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.fft.FftRequest;
import com.vertxcuda.kernel.KernelClient;
import com.vertxcuda.kernel.KernelOp;
import com.vertxcuda.kernel.KernelRequest;
import com.vertxcuda.rand.RandRequest;
import io.vertx.core.Future;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A library answers a body it does not serve BAD_REQUEST, naming it, and keeps serving. */
class RequestBodiesTest extends HostDeviceTest {

  @Test
  void aBodyOfAnotherLibraryIsABadRequest() {
    KernelClient kernels = KernelClient.create(vertx);
    Map<String, Object> wrong = Map.of(blas.address(), new FftRequest(), fft.address(), new BlasRequest(BlasOp.ASUM),
      rand.address(), new KernelRequest(KernelOp.FILL), kernels.address(), new RandRequest());
    wrong.forEach((address, body) -> {
      CudaException e = failure(vertx.eventBus().request(address, body)
        .recover(t -> Future.failedFuture(Failures.toCudaException(t))));
      assertEquals(FailureCode.BAD_REQUEST, e.code(), address + ": " + e.getMessage());
      assertTrue(e.getMessage().contains("does not serve " + body.getClass().getSimpleName()), e.getMessage());
    });
    assertEquals(10.0, await(blas.asum(4, f32(1, -2, 3, -4), 1)), 1e-6, "BLAS still serves");
    assertArrayEquals(new float[] {0.5f, 0.5f}, readF32(await(kernels.fill(f32(5, 5), 0.5))), "kernels still serve");
  }
}
