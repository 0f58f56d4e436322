package com.vertxcuda.bench;

import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.cuda.CudaBackend;
import com.vertxcuda.device.cuda.CudaContext;
import com.vertxcuda.device.cuda.CudaErrors;
import com.vertxcuda.device.cuda.CudaUnavailableException;
import com.vertxcuda.device.cuda.NativeLoading;
import com.vertxcuda.device.cuda.NativeLoading.NativeLibrary;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import io.vertx.core.json.JsonObject;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;
import jcuda.nvrtc.JNvrtc;
import jcuda.nvrtc.nvrtcProgram;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Poisons a context on purpose, in a process of its own: a kernel stores through a bad pointer, the
 * completion fails with a sticky CUDA_ERROR_ILLEGAL_ADDRESS, and every later call fails at once
 * without reaching CUDA; {@code close(true)} returns. Writes {@code sticky-error.json}, with how long
 * the fault took to be reported from the launch ({@code launchToErrorMicros}).
 */
public final class StickyErrorCheck {

  public static void main(String[] args) throws Exception {
    Path out = Path.of(args.length > 0 ? args[0] : ".");
    Files.createDirectories(out);
    JsonObject result = new JsonObject();
    DeviceOptions options = new DeviceOptions().setBackend(BackendKind.CUDA);
    try {
      CudaContext device = (CudaContext) CudaBackend.load(options).open(0);
      NativeLoading.prepare(NativeLibrary.NVRTC, options);
      GpuStream stream = device.createStream("faulty");
      // Stores through an address no allocation owns, offset by the (null) argument.
      CUfunction store = compile("extern \"C\" __global__ void store(float* x) {"
        + " float* bad = (float*) (0xdead0000ull + (unsigned long long) x); bad[threadIdx.x] = 1.0f; }", "store");
      CUdeviceptr bad = new CUdeviceptr();
      // From the launch to the completion's failure: how long the GPU and driver take to report the
      // fault, the floor under a poisoned context's take-over (RecoverySection measures the take-over).
      long launchedAt = System.nanoTime();
      int launched = JCudaDriver.cuLaunchKernel(store, 1, 1, 1, 32, 1, 1, 0, device.stream(stream),
        Pointer.to(Pointer.to(bad)), null);
      result.put("launch", launched == 0 ? "queued" : CudaErrors.name(launched));
      GpuEvent done = device.record(stream);
      try {
        device.whenComplete(done).get(30, TimeUnit.SECONDS);
        result.put("completion", "succeeded (unexpected)");
      } catch (ExecutionException e) {
        BackendException be = (BackendException) e.getCause();
        result.put("completion", be.getMessage()).put("sticky", be.isSticky()).put("code", be.code().name())
          .put("launchToErrorMicros", (System.nanoTime() - launchedAt) / 1000);
      }
      try {
        device.allocate(1024);
        result.put("afterwards", "allocate succeeded (unexpected)");
      } catch (BackendException e) {
        result.put("afterwards", "allocate refused: " + e.getMessage() + ", sticky " + e.isSticky());
      }
      long t0 = System.nanoTime();
      device.close(true);
      result.put("closePoisonedMicros", (System.nanoTime() - t0) / 1000);
      try {
        CudaBackend.load(options);
        result.put("reload", "succeeded (unexpected)");
      } catch (CudaUnavailableException e) {
        result.put("reload", "refused: " + e.getMessage());
      }
    } catch (CudaUnavailableException e) {
      result.put("gpu", false).put("reason", e.getMessage());
    }
    System.out.println(result.encodePrettily());
    Files.writeString(out.resolve("sticky-error.json"), result.encodePrettily() + "\n", StandardCharsets.UTF_8);
    System.exit(0);
  }

  private static CUfunction compile(String source, String name) {
    nvrtcProgram program = new nvrtcProgram();
    JNvrtc.nvrtcCreateProgram(program, source, name + ".cu", 0, null, null);
    JNvrtc.nvrtcCompileProgram(program, 0, null);
    String[] ptx = new String[1];
    JNvrtc.nvrtcGetPTX(program, ptx);
    JNvrtc.nvrtcDestroyProgram(program);
    CUmodule module = new CUmodule();
    JCudaDriver.cuModuleLoadData(module, ptx[0]);
    CUfunction f = new CUfunction();
    JCudaDriver.cuModuleGetFunction(f, module, name);
    return f;
  }
}
