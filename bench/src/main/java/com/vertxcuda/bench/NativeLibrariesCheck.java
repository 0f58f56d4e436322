package com.vertxcuda.bench;

import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.cuda.CudaBackend;
import com.vertxcuda.device.cuda.CudaUnavailableException;
import com.vertxcuda.device.cuda.NativeLoading;
import com.vertxcuda.device.cuda.NativeLoading.NativeLibrary;
import io.vertx.core.json.JsonObject;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasHandle;
import jcuda.jcufft.JCufft;
import jcuda.jcufft.cufftHandle;
import jcuda.jcufft.cufftType;
import jcuda.jcurand.JCurand;
import jcuda.jcurand.curandGenerator;
import jcuda.jcurand.curandRngType;
import jcuda.nvrtc.JNvrtc;
import jcuda.nvrtc.nvrtcProgram;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Proves native loading on a GPU host: each JCuda library loads through {@link NativeLoading}
 * (directly or through a forwarder) and computes one known answer. Writes
 * {@code native-libraries.json} into the folder given.
 */
public final class NativeLibrariesCheck {

  private final JsonObject result = new JsonObject();

  public static void main(String[] args) throws Exception {
    Path out = Path.of(args.length > 0 ? args[0] : ".");
    Files.createDirectories(out);
    NativeLibrariesCheck check = new NativeLibrariesCheck();
    DeviceOptions options = new DeviceOptions().setBackend(BackendKind.CUDA);
    try {
      CudaBackend.load(options).open(0);
      check.run("cublas", () -> check.cublas(options));
      check.run("cufft", () -> check.cufft(options));
      check.run("curand", () -> check.curand(options));
      check.run("nvrtc", () -> check.nvrtc(options));
    } catch (CudaUnavailableException e) {
      check.result.put("gpu", false).put("reason", e.getMessage());
      System.out.println("no GPU present, nothing checked: " + e.getMessage());
    }
    Files.writeString(out.resolve("native-libraries.json"), check.result.encodePrettily() + "\n", StandardCharsets.UTF_8);
    System.exit(0);
  }

  private interface Check {
    String run() throws Exception;
  }

  private void run(String name, Check check) {
    String outcome;
    try {
      outcome = check.run();
    } catch (Throwable t) {
      outcome = "FAILED: " + t;
    }
    result.put(name, outcome);
    System.out.println(name + ": " + outcome);
  }

  private static CUdeviceptr upload(float[] values) {
    CUdeviceptr p = new CUdeviceptr();
    JCudaDriver.cuMemAlloc(p, (long) values.length * Sizeof.FLOAT);
    JCudaDriver.cuMemcpyHtoD(p, Pointer.to(values), (long) values.length * Sizeof.FLOAT);
    return p;
  }

  private static float[] download(CUdeviceptr p, int n) {
    float[] out = new float[n];
    JCudaDriver.cuCtxSynchronize();
    JCudaDriver.cuMemcpyDtoH(Pointer.to(out), p, (long) n * Sizeof.FLOAT);
    return out;
  }

  private static String expect(float[] expected, float[] got, String loaded) {
    if (!Arrays.equals(expected, got)) {
      throw new IllegalStateException("expected " + Arrays.toString(expected) + " got " + Arrays.toString(got));
    }
    return "ok " + Arrays.toString(got) + " (" + loaded + ")";
  }

  private String cublas(DeviceOptions options) throws Exception {
    NativeLoading.prepare(NativeLibrary.CUBLAS, options);
    cublasHandle h = new cublasHandle();
    check("cublasCreate", JCublas2.cublasCreate(h));
    CUdeviceptr a = upload(new float[] {1, 3, 2, 4});
    CUdeviceptr b = upload(new float[] {5, 6, 7, 8});
    CUdeviceptr c = upload(new float[4]);
    check("cublasSgemm", JCublas2.cublasSgemm(h, 0, 0, 2, 2, 2, Pointer.to(new float[] {1}), a, 2, b, 2,
      Pointer.to(new float[] {0}), c, 2));
    String r = expect(new float[] {17, 39, 23, 53}, download(c, 4), NativeLoading.preparedPath(NativeLibrary.CUBLAS));
    JCublas2.cublasDestroy(h);
    return r;
  }

  private String cufft(DeviceOptions options) throws Exception {
    NativeLoading.prepare(NativeLibrary.CUFFT, options);
    float[] delta = new float[16];
    delta[0] = 1;
    CUdeviceptr x = upload(delta);
    cufftHandle plan = new cufftHandle();
    check("cufftPlan1d", JCufft.cufftPlan1d(plan, 8, cufftType.CUFFT_C2C, 1));
    check("cufftExecC2C", JCufft.cufftExecC2C(plan, x, x, JCufft.CUFFT_FORWARD));
    float[] ones = new float[16];
    for (int i = 0; i < 16; i += 2) {
      ones[i] = 1;
    }
    String r = expect(ones, download(x, 16), NativeLoading.preparedPath(NativeLibrary.CUFFT));
    JCufft.cufftDestroy(plan);
    return r;
  }

  private String curand(DeviceOptions options) throws Exception {
    NativeLoading.prepare(NativeLibrary.CURAND, options);
    curandGenerator g = new curandGenerator();
    check("curandCreateGenerator", JCurand.curandCreateGenerator(g, curandRngType.CURAND_RNG_PSEUDO_DEFAULT));
    CUdeviceptr x = upload(new float[1024]);
    check("curandGenerateUniform", JCurand.curandGenerateUniform(g, x, 1024));
    float[] u = download(x, 1024);
    double sum = 0;
    for (float v : u) {
      if (!(v > 0 && v <= 1)) {
        throw new IllegalStateException("uniform value out of (0, 1]: " + v);
      }
      sum += v;
    }
    JCurand.curandDestroyGenerator(g);
    return String.format("ok 1024 uniforms in (0, 1], mean %.3f (%s)", sum / 1024, NativeLoading.preparedPath(NativeLibrary.CURAND));
  }

  private String nvrtc(DeviceOptions options) throws Exception {
    NativeLoading.prepare(NativeLibrary.NVRTC, options);
    nvrtcProgram program = new nvrtcProgram();
    check("nvrtcCreateProgram", JNvrtc.nvrtcCreateProgram(program,
      "extern \"C\" __global__ void iota(float* x) { x[threadIdx.x] = 2.0f * threadIdx.x; }", "iota.cu", 0, null, null));
    check("nvrtcCompileProgram", JNvrtc.nvrtcCompileProgram(program, 0, null));
    String[] ptx = new String[1];
    check("nvrtcGetPTX", JNvrtc.nvrtcGetPTX(program, ptx));
    JNvrtc.nvrtcDestroyProgram(program);
    CUmodule module = new CUmodule();
    check("cuModuleLoadData", JCudaDriver.cuModuleLoadData(module, ptx[0]));
    CUfunction f = new CUfunction();
    check("cuModuleGetFunction", JCudaDriver.cuModuleGetFunction(f, module, "iota"));
    CUdeviceptr x = upload(new float[8]);
    check("cuLaunchKernel", JCudaDriver.cuLaunchKernel(f, 1, 1, 1, 8, 1, 1, 0, null, Pointer.to(Pointer.to(x)), null));
    return expect(new float[] {0, 2, 4, 6, 8, 10, 12, 14}, download(x, 8), NativeLoading.preparedPath(NativeLibrary.NVRTC));
  }

  private static void check(String what, int result) {
    if (result != 0) {
      throw new IllegalStateException(what + " returned " + result);
    }
  }
}
