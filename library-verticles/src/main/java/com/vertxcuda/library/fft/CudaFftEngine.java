package com.vertxcuda.library.fft;

import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.library.impl.CudaPointers;
import com.vertxcuda.library.impl.CudaStatus;
import com.vertxcuda.library.impl.EngineResult;
import jcuda.driver.CUdeviceptr;
import jcuda.jcufft.JCufft;
import jcuda.jcufft.cufftHandle;
import jcuda.jcufft.cufftType;
import jcuda.runtime.cudaStream_t;

/** cuFFT through JCufft: 64-bit plan-many plans bound to the library's stream. */
public final class CudaFftEngine implements FftEngine {

  private final CudaPointers pointers;
  private final cudaStream_t stream;

  public CudaFftEngine(CudaPointers pointers, GpuStream stream) {
    this.pointers = pointers;
    this.stream = new cudaStream_t(pointers.stream(stream));
    JCufft.setExceptionsEnabled(false);
  }

  private static final class CudaPlan implements Plan {
    final cufftHandle handle;
    final long workBytes;

    CudaPlan(cufftHandle handle, long workBytes) {
      this.handle = handle;
      this.workBytes = workBytes;
    }

    @Override
    public long bytes() {
      return workBytes;
    }
  }

  private static void check(int status, String call) throws BackendException {
    CudaStatus.CUFFT.check(status, call);
  }

  private static long[] longs(java.util.List<Integer> v) {
    return v.stream().mapToLong(Integer::longValue).toArray();
  }

  @Override
  public Plan plan(FftPlanKey key) throws BackendException {
    cufftHandle handle = new cufftHandle();
    check(JCufft.cufftCreate(handle), "cufftCreate");
    try {
      check(JCufft.cufftSetStream(handle, stream), "cufftSetStream");
      FftLayout in = key.input();
      FftLayout out = key.output();
      long[] work = new long[1];
      // A complex transform over contiguous data on both sides is planned in cuFFT's basic layout (no
      // embeds, strides ignored), as a cufftPlanMany caller plans it; the embeds describe the same
      // addresses, but they ask for the advanced layout. Real transforms keep theirs: the basic layout
      // of an in-place R2C or C2R pads the real side, which the embeds spell out.
      boolean complex = key.type() == FftType.C2C || key.type() == FftType.Z2Z;
      boolean basic = complex && in.contiguous(key.n()) && out.contiguous(key.n());
      check(JCufft.cufftMakePlanMany64(handle, key.n().size(), longs(key.n()), basic ? null : longs(in.embed()),
        in.stride(), in.dist(), basic ? null : longs(out.embed()), out.stride(), out.dist(), cufftTypeOf(key.type()),
        key.batch(), work), "cufftMakePlanMany64");
      // The work area cuFFT allocated for the plan (auto-allocation): what the plan holds on the
      // device, asked again once the plan is complete (cufftGetSize) in case it differs from the estimate.
      long[] size = new long[1];
      check(JCufft.cufftGetSize(handle, size), "cufftGetSize");
      return new CudaPlan(handle, Math.max(work[0], size[0]));
    } catch (BackendException e) {
      JCufft.cufftDestroy(handle);
      throw e;
    }
  }

  @Override
  public EngineResult enqueue(GpuStream s, Plan plan, FftCall call) throws BackendException {
    cufftHandle h = ((CudaPlan) plan).handle;
    CUdeviceptr in = pointers.pointer(call.input().memory(), call.input().byteOffset());
    CUdeviceptr out = pointers.pointer(call.output().memory(), call.output().byteOffset());
    int dir = call.direction() == FftDirection.FORWARD ? JCufft.CUFFT_FORWARD : JCufft.CUFFT_INVERSE;
    switch (call.type()) {
      case C2C: check(JCufft.cufftExecC2C(h, in, out, dir), "cufftExecC2C"); break;
      case R2C: check(JCufft.cufftExecR2C(h, in, out), "cufftExecR2C"); break;
      case C2R: check(JCufft.cufftExecC2R(h, in, out), "cufftExecC2R"); break;
      case Z2Z: check(JCufft.cufftExecZ2Z(h, in, out, dir), "cufftExecZ2Z"); break;
      case D2Z: check(JCufft.cufftExecD2Z(h, in, out), "cufftExecD2Z"); break;
      default: check(JCufft.cufftExecZ2D(h, in, out), "cufftExecZ2D");
    }
    return null;
  }

  @Override
  public void destroy(Plan plan, boolean poisoned) {
    if (!poisoned) {
      JCufft.cufftDestroy(((CudaPlan) plan).handle);
    }
  }

  private static int cufftTypeOf(FftType t) {
    switch (t) {
      case C2C: return cufftType.CUFFT_C2C;
      case R2C: return cufftType.CUFFT_R2C;
      case C2R: return cufftType.CUFFT_C2R;
      case Z2Z: return cufftType.CUFFT_Z2Z;
      case D2Z: return cufftType.CUFFT_D2Z;
      default: return cufftType.CUFFT_Z2D;
    }
  }
}
