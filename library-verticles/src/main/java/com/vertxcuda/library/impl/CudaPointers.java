package com.vertxcuda.library.impl;

import com.vertxcuda.FailureCode;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.DeviceMemory;
import com.vertxcuda.device.spi.GpuStream;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * The two things a cuda engine needs from the cuda backend: the native stream behind a
 * {@link GpuStream} and the device pointer of a byte of {@link DeviceMemory}. The cuda backend's
 * {@code com.vertxcuda.device.cuda.CudaContext} provides both as public methods
 * {@code CUstream stream(GpuStream)} and {@code CUdeviceptr pointer(DeviceMemory, long)}; they are
 * found by name, so this module builds without the cuda backend.
 */
public interface CudaPointers {

  String CUDA_CONTEXT = "com.vertxcuda.device.cuda.CudaContext";

  CUstream stream(GpuStream stream);

  CUdeviceptr pointer(DeviceMemory memory, long byteOffset);

  /** The pointers of a cuda-backend context; UNSUPPORTED when {@code device} is not one. */
  static CudaPointers of(DeviceContext device) throws BackendException {
    try {
      Class<?> type = Class.forName(CUDA_CONTEXT, true, device.getClass().getClassLoader());
      if (!type.isInstance(device)) {
        throw BackendException.of(FailureCode.UNSUPPORTED, "no cuda engine for a " + device.getClass().getName());
      }
      MethodHandles.Lookup lookup = MethodHandles.publicLookup();
      MethodHandle stream = lookup.findVirtual(type, "stream", MethodType.methodType(CUstream.class, GpuStream.class))
        .bindTo(device);
      MethodHandle pointer = lookup.findVirtual(type, "pointer",
        MethodType.methodType(CUdeviceptr.class, DeviceMemory.class, long.class)).bindTo(device);
      return new CudaPointers() {
        @Override
        public CUstream stream(GpuStream s) {
          try {
            return (CUstream) stream.invoke(s);
          } catch (RuntimeException | Error e) {
            throw e;
          } catch (Throwable t) {
            throw new IllegalStateException(t);
          }
        }

        @Override
        public CUdeviceptr pointer(DeviceMemory memory, long byteOffset) {
          try {
            return (CUdeviceptr) pointer.invoke(memory, byteOffset);
          } catch (RuntimeException | Error e) {
            throw e;
          } catch (Throwable t) {
            throw new IllegalStateException(t);
          }
        }
      };
    } catch (ClassNotFoundException | NoSuchMethodException | IllegalAccessException e) {
      throw BackendException.of(FailureCode.UNSUPPORTED, "the cuda backend does not expose " + CUDA_CONTEXT
        + ".stream(GpuStream) and .pointer(DeviceMemory, long): " + e);
    }
  }
}
