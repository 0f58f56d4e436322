package com.vertxcuda.device;

import com.vertxcuda.DeviceClient;
import com.vertxcuda.device.cuda.CudaBackend;
import com.vertxcuda.device.cuda.CudaUnavailableException;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/** auto settles on cuda where a GPU is usable and on host elsewhere; cuda without a GPU fails naming what was searched. */
@ExtendWith(VertxExtension.class)
@Tag("runs-once")
class BackendSelectionTest {

  private static boolean gpu() {
    try {
      CudaBackend.load(new DeviceOptions());
      return true;
    } catch (CudaUnavailableException e) {
      return false;
    }
  }

  @Test
  void autoRunsOnCudaWhereUsableElseOnHost(Vertx vertx, VertxTestContext ctx) {
    String expected = gpu() ? "cuda" : "host";
    vertx.deployVerticle(new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.AUTO)))
      .compose(id -> DeviceClient.create(vertx).describe())
      .onComplete(ctx.succeeding(info -> ctx.verify(() -> {
        assertEquals(expected, info.getBackend());
        ctx.completeNow();
      })));
  }

  @Test
  void cudaWithoutGpuFailsDeploymentNamingWhatWasSearched(Vertx vertx, VertxTestContext ctx) {
    assumeFalse(gpu(), "a GPU is usable here");
    String configured = "/opt/vertx-cuda-test/lib";
    vertx.deployVerticle(new DeviceVerticle(new DeviceOptions().setBackend(BackendKind.CUDA).setCudaLibraryPath(configured)))
      .onComplete(ctx.failing(t -> ctx.verify(() -> {
        String m = t.getMessage();
        assertTrue(m.contains("libcuda.so.1"), m);
        // Where a driver is installed but no device answers, the message names the driver found instead.
        if (m.contains("no NVIDIA driver")) {
          for (String named : new String[] {configured, "/usr/lib/x86_64-linux-gnu",
            "/usr/local/cuda/targets/x86_64-linux/lib", "/usr/local/cuda/lib64", "linker cache"}) {
            assertTrue(m.contains(named), "'" + m + "' should name " + named);
          }
        }
        ctx.completeNow();
      })));
  }
}
