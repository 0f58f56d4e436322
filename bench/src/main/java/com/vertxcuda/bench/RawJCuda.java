package com.vertxcuda.bench;

import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.cuda.CudaBackend;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasHandle;
import jcuda.jcufft.JCufft;
import jcuda.jcurand.JCurand;
import jcuda.runtime.cudaStream_t;

import java.util.ArrayList;
import java.util.List;

/**
 * The baseline every sweep compares with: raw JCuda calls on device 0's primary context, current on
 * the benchmark's thread, on one stream, with failures thrown (JCuda exceptions on). Device and
 * page-locked memory it allocates is freed when it closes.
 */
final class RawJCuda implements AutoCloseable {

  final CUdevice device = new CUdevice();
  final CUcontext context = new CUcontext();
  final CUstream stream = new CUstream();
  final cudaStream_t rtStream;
  private final List<CUdeviceptr> allocations = new ArrayList<>();
  private final List<Pointer> pinned = new ArrayList<>();
  private cublasHandle blas;

  private RawJCuda() throws Exception {
    // The same native loading as the verticles: the forwarders stand in for CUDA 11's sonames.
    CudaBackend.load(new DeviceOptions());
    JCudaDriver.setExceptionsEnabled(true);
    JCublas2.setExceptionsEnabled(true);
    JCufft.setExceptionsEnabled(true);
    JCurand.setExceptionsEnabled(true);
    JCudaDriver.cuInit(0);
    JCudaDriver.cuDeviceGet(device, 0);
    JCudaDriver.cuDevicePrimaryCtxRetain(context, device);
    JCudaDriver.cuCtxSetCurrent(context);
    JCudaDriver.cuStreamCreate(stream, 0);
    rtStream = new cudaStream_t(stream);
  }

  static RawJCuda open() throws Exception {
    return new RawJCuda();
  }

  CUdeviceptr alloc(long bytes) {
    CUdeviceptr p = new CUdeviceptr();
    JCudaDriver.cuMemAlloc(p, bytes);
    allocations.add(p);
    return p;
  }

  void free(CUdeviceptr p) {
    if (allocations.remove(p)) {
      JCudaDriver.cuMemFree(p);
    }
  }

  /** Page-locked host memory, freed when the session closes. */
  Pointer pinned(long bytes) {
    Pointer p = new Pointer();
    JCudaDriver.cuMemHostAlloc(p, bytes, JCudaDriver.CU_MEMHOSTALLOC_PORTABLE);
    pinned.add(p);
    return p;
  }

  void freePinned(Pointer p) {
    if (pinned.remove(p)) {
      JCudaDriver.cuMemFreeHost(p);
    }
  }

  void sync() {
    JCudaDriver.cuStreamSynchronize(stream);
  }

  /** One cuBLAS handle on the stream, made when first asked for. */
  cublasHandle blas() {
    if (blas == null) {
      blas = new cublasHandle();
      JCublas2.cublasCreate(blas);
      JCublas2.cublasSetStream(blas, rtStream);
    }
    return blas;
  }

  @Override
  public void close() {
    sync();
    for (CUdeviceptr p : allocations) {
      JCudaDriver.cuMemFree(p);
    }
    allocations.clear();
    for (Pointer p : pinned) {
      JCudaDriver.cuMemFreeHost(p);
    }
    pinned.clear();
    if (blas != null) {
      JCublas2.cublasDestroy(blas);
    }
    JCudaDriver.cuStreamDestroy(stream);
    JCudaDriver.cuCtxSetCurrent(new CUcontext());
    JCudaDriver.cuDevicePrimaryCtxRelease(device);
    // The toolkit, measured next in this JVM, reads JCuda's status codes: exceptions off, as it has them.
    JCudaDriver.setExceptionsEnabled(false);
    JCublas2.setExceptionsEnabled(false);
    JCufft.setExceptionsEnabled(false);
    JCurand.setExceptionsEnabled(false);
  }
}
