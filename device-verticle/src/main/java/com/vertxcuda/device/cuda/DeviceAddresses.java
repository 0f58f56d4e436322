package com.vertxcuda.device.cuda;

import jcuda.NativePointerObject;
import jcuda.Pointer;

import java.lang.reflect.Method;

/**
 * The raw address a JCuda {@link Pointer} stands for, for device arrays of device pointers (the
 * pointer-batched cuBLAS calls). JCuda keeps it protected; it is read once through reflection.
 */
final class DeviceAddresses {

  private static final Method NATIVE_POINTER;
  private static final Method BYTE_OFFSET;

  static {
    try {
      NATIVE_POINTER = NativePointerObject.class.getDeclaredMethod("getNativePointer");
      NATIVE_POINTER.setAccessible(true);
      BYTE_OFFSET = Pointer.class.getDeclaredMethod("getByteOffset");
      BYTE_OFFSET.setAccessible(true);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private DeviceAddresses() {
  }

  static long of(Pointer p) {
    try {
      return (long) NATIVE_POINTER.invoke(p) + (long) BYTE_OFFSET.invoke(p);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }
}
