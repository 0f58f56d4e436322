package com.vertxcuda.device.cuda;

import com.vertxcuda.device.spi.BackendException;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.concurrent.locks.LockSupport;

/**
 * Real faults on a real GPU, for tests and drills ({@code DeviceOptions.faultInjection}): a kernel
 * that stores through an unmapped address (CUDA_ERROR_ILLEGAL_ADDRESS, sticky), a kernel that spins
 * until the host releases it, and a launch the driver refuses (a non-sticky failed call). Hand-written
 * PTX, JIT-compiled by the driver on first use: no NVRTC needed in the device tier.
 */
final class FaultKernels {

  /** A stalled kernel gives up by itself after this long, so a lost release cannot hang a GPU for good. */
  static final long STALL_LIMIT_NANOS = TimeUnit.SECONDS.toNanos(120);

  private static final String PTX = String.join("\n",
    ".version 7.0",
    ".target sm_70",
    ".address_size 64",
    "",
    ".visible .entry vertxcuda_poison()",
    "{",
    "  .reg .b32 %r<2>;",
    "  .reg .b64 %rd<2>;",
    "  mov.u64 %rd1, 16;",
    "  mov.u32 %r1, 1;",
    "  st.volatile.global.u32 [%rd1], %r1;",
    "  ret;",
    "}",
    "",
    ".visible .entry vertxcuda_nop()",
    "{",
    "  ret;",
    "}",
    "",
    ".visible .entry vertxcuda_stall(",
    "  .param .u64 vertxcuda_stall_flag,",
    "  .param .u64 vertxcuda_stall_limit",
    ")",
    "{",
    "  .reg .pred %p<3>;",
    "  .reg .b32 %r<2>;",
    "  .reg .b64 %rd<7>;",
    "  ld.param.u64 %rd1, [vertxcuda_stall_flag];",
    "  cvta.to.global.u64 %rd6, %rd1;",
    "  ld.param.u64 %rd2, [vertxcuda_stall_limit];",
    "  mov.u64 %rd3, %globaltimer;",
    "  add.u64 %rd4, %rd3, %rd2;",
    "$L_spin:",
    "  ld.volatile.global.u32 %r1, [%rd6];",
    "  setp.ne.u32 %p1, %r1, 0;",
    "  @%p1 bra $L_done;",
    "  mov.u64 %rd5, %globaltimer;",
    "  setp.lt.u64 %p2, %rd5, %rd4;",
    "  @%p2 bra $L_spin;",
    "$L_done:",
    "  ret;",
    "}",
    "");

  private CUmodule module;
  private CUfunction poison;
  private CUfunction stall;
  private CUfunction nop;

  private void load() throws BackendException {
    if (module != null) {
      return;
    }
    CUmodule m = new CUmodule();
    CudaErrors.check(JCudaDriver.cuModuleLoadData(m, PTX), "cuModuleLoadData of the fault kernels");
    CUfunction p = new CUfunction();
    CUfunction s = new CUfunction();
    CUfunction n = new CUfunction();
    CudaErrors.check(JCudaDriver.cuModuleGetFunction(p, m, "vertxcuda_poison"), "cuModuleGetFunction");
    CudaErrors.check(JCudaDriver.cuModuleGetFunction(s, m, "vertxcuda_stall"), "cuModuleGetFunction");
    CudaErrors.check(JCudaDriver.cuModuleGetFunction(n, m, "vertxcuda_nop"), "cuModuleGetFunction");
    module = m;
    nop = n;
    poison = p;
    stall = s;
  }

  /** Queues a one-thread kernel that stores through address 16: the stream, and the process's CUDA, end in CUDA_ERROR_ILLEGAL_ADDRESS. */
  synchronized void poison(CUstream stream) throws BackendException {
    load();
    CudaErrors.check(JCudaDriver.cuLaunchKernel(poison, 1, 1, 1, 1, 1, 1, 0, stream, null, null),
      "injected: cuLaunchKernel(vertxcuda_poison)");
  }

  /**
   * Queues a kernel that spins on a flag in mapped host memory and waits for it on the calling thread,
   * the way a thread waits on a hung GPU, until {@code keepStalling} turns false; then releases the
   * kernel and returns once it has ended.
   */
  void stall(CUstream stream, BooleanSupplier keepStalling) throws BackendException {
    Pointer host = new Pointer();
    CudaErrors.check(JCudaDriver.cuMemHostAlloc(host, 4,
      JCudaDriver.CU_MEMHOSTALLOC_DEVICEMAP | JCudaDriver.CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc of the stall flag");
    try {
      ByteBuffer flag = host.getByteBuffer(0, 4).order(ByteOrder.nativeOrder());
      flag.putInt(0, 0);
      CUdeviceptr device = new CUdeviceptr();
      CudaErrors.check(JCudaDriver.cuMemHostGetDevicePointer(device, host, 0), "cuMemHostGetDevicePointer");
      synchronized (this) {
        load();
        CudaErrors.check(JCudaDriver.cuLaunchKernel(stall, 1, 1, 1, 1, 1, 1, 0, stream,
          Pointer.to(Pointer.to(device), Pointer.to(new long[] {STALL_LIMIT_NANOS})), null),
          "injected: cuLaunchKernel(vertxcuda_stall)");
      }
      int r;
      while ((r = JCudaDriver.cuStreamQuery(stream)) == CUresult.CUDA_ERROR_NOT_READY && keepStalling.getAsBoolean()) {
        LockSupport.parkNanos(1_000_000);
      }
      flag.putInt(0, 1);
      while (r == CUresult.CUDA_ERROR_NOT_READY) {
        LockSupport.parkNanos(100_000);
        r = JCudaDriver.cuStreamQuery(stream);
      }
      CudaErrors.check(r, "cuStreamQuery after the stall");
    } finally {
      JCudaDriver.cuMemFreeHost(host);
    }
  }

  /** A launch the driver refuses at once (a 4,096-thread block): a failed call that poisons nothing. */
  synchronized BackendException refusedLaunch(CUstream stream) throws BackendException {
    load();
    int r = JCudaDriver.cuLaunchKernel(nop, 1, 1, 1, 4096, 1, 1, 0, stream, null, null);
    return CudaErrors.failure(r == CUresult.CUDA_SUCCESS ? CUresult.CUDA_ERROR_UNKNOWN : r,
      "injected failure: cuLaunchKernel with a 4,096-thread block");
  }

  synchronized void unload() {
    if (module != null) {
      JCudaDriver.cuModuleUnload(module);
      module = null;
    }
  }
}
