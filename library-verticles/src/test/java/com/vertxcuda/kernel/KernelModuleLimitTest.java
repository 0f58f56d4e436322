package com.vertxcuda.kernel;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.TestDevices;
import com.vertxcuda.library.HostDeviceTest;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Loaded modules are bounded by {@code kernel.maxModules}: a load past it is refused with
 * QUEUE_FULL naming the limit before anything is loaded or compiled (on every backend; the GPU
 * side, and the slots given back by unloads and timed-out loads, are in {@link KernelGpuTest}).
 */
class KernelModuleLimitTest extends HostDeviceTest {

  @Override
  protected DeviceOptions options() {
    return TestDevices.options().setLibraryOptions(new JsonObject().put("kernel", new JsonObject().put("maxModules", 0)));
  }

  @Test
  void loadsPastMaxModulesAreQueueFullNamingTheLimit() {
    KernelClient kernels = KernelClient.create(vertx);
    List<CudaException> refused = List.of(
      failure(kernels.loadPtx(".version 7.0\n.target sm_80\n.address_size 64\n")),
      failure(kernels.compile("extern \"C\" __global__ void k() {}", null, List.of())),
      failure(kernels.execute(new KernelRequest(KernelOp.LOAD_IMAGE).setImage(Buffer.buffer(new byte[] {1})))));
    for (CudaException e : refused) {
      assertEquals(FailureCode.QUEUE_FULL, e.code(), e.getMessage());
      assertTrue(e.getMessage().contains("maxModules = 0"), "'" + e.getMessage() + "' names the limit");
    }
    // A bad load is still BAD_REQUEST naming its field, and the built-ins still run.
    assertBadRequest(kernels.compile("", null, List.of()), "source");
    assertArrayEquals(new float[] {3, 3}, readF32(await(kernels.fill(f32(0, 0), 3))));
  }
}
