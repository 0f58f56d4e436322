package com.vertxcuda.library.impl;

import com.vertxcuda.FailureCode;
import com.vertxcuda.device.cuda.CudaContext;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.DeviceMemory;
import com.vertxcuda.device.spi.GpuStream;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;


/**
 * What a cuda engine needs from the cuda backend: the native stream behind a {@link GpuStream} and
 * the device pointer (or address) of a byte of {@link DeviceMemory}.
 */
public interface CudaPointers {

  CUstream stream(GpuStream stream);

  CUdeviceptr pointer(DeviceMemory memory, long byteOffset);

  /** The same device address as a number (for pointer arrays). */
  long address(DeviceMemory memory, long byteOffset);

  /** The pointers of a cuda-backend context; UNSUPPORTED when {@code device} is not one. */
  static CudaPointers of(DeviceContext device) throws BackendException {
    if (!(device instanceof CudaContext)) {
      throw BackendException.of(FailureCode.UNSUPPORTED, "no cuda engine for a " + device.getClass().getName());
    }
    CudaContext cuda = (CudaContext) device;
    return new CudaPointers() {
      @Override
      public CUstream stream(GpuStream s) {
        return cuda.stream(s);
      }

      @Override
      public CUdeviceptr pointer(DeviceMemory memory, long byteOffset) {
        return cuda.pointer(memory, byteOffset);
      }

      @Override
      public long address(DeviceMemory memory, long byteOffset) {
        return cuda.address(memory, byteOffset);
      }
    };
  }
}
