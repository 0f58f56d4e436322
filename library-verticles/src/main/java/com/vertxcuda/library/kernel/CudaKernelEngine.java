package com.vertxcuda.library.kernel;

import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.cuda.CudaErrors;
import com.vertxcuda.device.cuda.NativeLoading;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.library.impl.CudaPointers;
import com.vertxcuda.library.impl.CudaStatus;
import com.vertxcuda.library.impl.EngineResult;
import com.vertxcuda.library.impl.Operand;
import jcuda.Pointer;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;
import jcuda.nvrtc.JNvrtc;
import jcuda.nvrtc.nvrtcProgram;
import jcuda.nvrtc.nvrtcResult;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Kernels through the CUDA driver's module API on this library's stream; CUDA C through NVRTC
 * (JNvrtc, with a forwarder to libnvrtc on CUDA 12 and 13 hosts). The built-ins come from the PTX
 * resource {@code elementwise.ptx}, loaded once per context.
 */
public final class CudaKernelEngine implements KernelEngine {

  private static final int THREADS = 256;
  private static final long MAX_BLOCKS = 65535L * 32;

  private final CudaPointers pointers;
  private final CUstream stream;
  private final CUmodule builtins = new CUmodule();
  private final Map<String, CUfunction> builtinFunctions = new HashMap<>();
  private final String arch;
  private final int multiprocessors;

  public CudaKernelEngine(CudaPointers pointers, GpuStream stream) throws BackendException {
    this.pointers = pointers;
    this.stream = pointers.stream(stream);
    CUdevice dev = new CUdevice();
    CudaErrors.check(JCudaDriver.cuCtxGetDevice(dev), "cuCtxGetDevice");
    int[] major = new int[1];
    int[] minor = new int[1];
    int[] sms = new int[1];
    CudaErrors.check(JCudaDriver.cuDeviceGetAttribute(major, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cuDeviceGetAttribute");
    CudaErrors.check(JCudaDriver.cuDeviceGetAttribute(minor, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cuDeviceGetAttribute");
    CudaErrors.check(JCudaDriver.cuDeviceGetAttribute(sms, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "cuDeviceGetAttribute");
    this.arch = "compute_" + major[0] + minor[0];
    this.multiprocessors = sms[0];
    CudaErrors.check(JCudaDriver.cuModuleLoadData(builtins, resource("/com/vertxcuda/library/kernel/elementwise.ptx")),
      "cuModuleLoadData(elementwise.ptx)");
  }

  @Override
  public Object load(byte[] image) throws BackendException {
    CUmodule module = new CUmodule();
    int r = JCudaDriver.cuModuleLoadData(module, image);
    if (r != 0 && !CudaErrors.isSticky(r)) {
      throw BackendException.of(FailureCode.BAD_REQUEST, "the module does not load: " + CudaErrors.name(r));
    }
    CudaErrors.check(r, "cuModuleLoadData");
    return module;
  }

  @Override
  public String compile(String source, String name, String arch, List<String> compileOptions, StringBuilder log)
    throws BackendException {
    // The cuda backend prepared every CUDA library with the device's options when it loaded; what
    // it could not find was logged then.
    if (NativeLoading.preparedPath(NativeLoading.NativeLibrary.NVRTC) == null) {
      throw BackendException.of(FailureCode.UNSUPPORTED, "NVRTC is not available: no libnvrtc was found when the "
        + "cuda backend loaded (see its warning)");
    }
    nvrtcProgram program = new nvrtcProgram();
    nvrtc(JNvrtc.nvrtcCreateProgram(program, source, name, 0, null, null), "nvrtcCreateProgram");
    try {
      List<String> opts = new ArrayList<>();
      opts.add("--gpu-architecture=" + arch);
      opts.addAll(compileOptions);
      int result = JNvrtc.nvrtcCompileProgram(program, opts.size(), opts.toArray(new String[0]));
      String[] text = new String[1];
      JNvrtc.nvrtcGetProgramLog(program, text);
      if (text[0] != null) {
        log.append(text[0]);
      }
      if (result != nvrtcResult.NVRTC_SUCCESS) {
        throw BackendException.of(FailureCode.BAD_REQUEST, "NVRTC could not compile " + name + " ("
          + nvrtcResult.stringFor(result) + "): " + log);
      }
      String[] ptx = new String[1];
      nvrtc(JNvrtc.nvrtcGetPTX(program, ptx), "nvrtcGetPTX");
      return ptx[0];
    } finally {
      JNvrtc.nvrtcDestroyProgram(program);
    }
  }

  @Override
  public String deviceArch() {
    return arch;
  }

  @Override
  public void launch(GpuStream s, Object module, String function, KernelCall call) throws BackendException {
    CUfunction f = new CUfunction();
    int r = JCudaDriver.cuModuleGetFunction(f, (CUmodule) module, function);
    if (r != 0 && !CudaErrors.isSticky(r)) {
      throw BackendException.of(FailureCode.NOT_FOUND, "the module has no function '" + function + "' ("
        + CudaErrors.name(r) + "); kernels need extern \"C\" to keep their names");
    }
    CudaErrors.check(r, "cuModuleGetFunction");
    List<Pointer> params = new ArrayList<>();
    for (KernelCall.Arg a : call.args) {
      params.add(a.buffer != null ? Pointer.to(pointers.pointer(a.buffer.memory(), a.buffer.byteOffset()))
        : scalar(a.dtype, a.bits));
    }
    int[] g = call.grid;
    int[] b = call.block;
    CudaErrors.check(JCudaDriver.cuLaunchKernel(f, g[0], g[1], g[2], b[0], b[1], b[2], call.sharedBytes, stream,
      Pointer.to(params.toArray(new Pointer[0])), null), "cuLaunchKernel(" + function + ")");
  }

  @Override
  public void unload(Object module) throws BackendException {
    CudaErrors.check(JCudaDriver.cuModuleUnload((CUmodule) module), "cuModuleUnload");
  }

  @Override
  public EngineResult builtin(GpuStream s, KernelCall call) throws BackendException {
    Operand x = call.x;
    Operand y = call.y;
    Operand out = call.output;
    double scalar = call.scalar;
    long n = out.handle().length();
    if (n == 0) {
      return null;
    }
    String suffix = out.dtype() == DType.F64 ? "f64" : "f32";
    Pointer o = Pointer.to(pointers.pointer(out.memory(), out.byteOffset()));
    Pointer count = Pointer.to(new long[] {n});
    Pointer value = out.dtype() == DType.F64 ? Pointer.to(new double[] {scalar}) : Pointer.to(new float[] {(float) scalar});
    String name;
    Pointer params;
    switch (call.op) {
      case FILL:
        name = "vc_fill_" + suffix;
        params = Pointer.to(o, value, count);
        break;
      case SCALE:
        name = "vc_scale_" + suffix;
        params = Pointer.to(in(x), o, value, count);
        break;
      case ADD:
        name = "vc_add_" + suffix;
        params = Pointer.to(in(x), in(y), o, count);
        break;
      case MULTIPLY:
        name = "vc_mul_" + out.dtype().name().toLowerCase(java.util.Locale.ROOT);
        params = Pointer.to(in(x), in(y), o, count);
        break;
      default:
        name = "vc_" + tag(x.dtype()) + "_to_" + tag(out.dtype());
        if (x.dtype() == out.dtype()) {
          CudaErrors.check(JCudaDriver.cuMemcpyDtoDAsync(pointers.pointer(out.memory(), out.byteOffset()),
            pointers.pointer(x.memory(), x.byteOffset()), out.byteExtent(), stream), "cuMemcpyDtoDAsync");
          return null;
        }
        params = Pointer.to(in(x), o, count);
    }
    long blocks = Math.min((n + THREADS - 1) / THREADS, Math.min(MAX_BLOCKS, 32L * multiprocessors));
    CudaErrors.check(JCudaDriver.cuLaunchKernel(builtin(name), (int) blocks, 1, 1, THREADS, 1, 1, 0, stream, params, null),
      "cuLaunchKernel(" + name + ")");
    return null;
  }

  private Pointer in(Operand o) {
    return Pointer.to(pointers.pointer(o.memory(), o.byteOffset()));
  }

  private static String tag(DType t) {
    return t == DType.F16 ? "f16" : t == DType.BF16 ? "bf16" : "f32";
  }

  private CUfunction builtin(String name) throws BackendException {
    CUfunction f = builtinFunctions.get(name);
    if (f == null) {
      f = new CUfunction();
      CudaErrors.check(JCudaDriver.cuModuleGetFunction(f, builtins, name), "cuModuleGetFunction(" + name + ")");
      builtinFunctions.put(name, f);
    }
    return f;
  }

  private static Pointer scalar(DType t, long bits) {
    switch (t) {
      case F32: case I32: case U32: return Pointer.to(new int[] {(int) bits});
      case F64: case I64: case U64: return Pointer.to(new long[] {bits});
      case F16: case BF16: return Pointer.to(new short[] {(short) bits});
      default: return Pointer.to(new byte[] {(byte) bits});
    }
  }

  private static void nvrtc(int result, String call) throws BackendException {
    CudaStatus.NVRTC.check(result, call);
  }

  private static byte[] resource(String path) {
    try (InputStream in = CudaKernelEngine.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + path);
      }
      byte[] text = in.readAllBytes();
      byte[] terminated = new byte[text.length + 1];
      System.arraycopy(text, 0, terminated, 0, text.length);
      return terminated;
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close(boolean poisoned) {
    if (!poisoned) {
      JCudaDriver.cuModuleUnload(builtins);
    }
  }
}
