package com.vertxcuda.device.cuda;

import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.spi.Backend;

import java.nio.file.Files;
import java.nio.file.Path;

/** The JCuda backend. */
public final class CudaBackend {

  private CudaBackend() {
  }

  /** Whether an NVIDIA driver library is on disk (no native library is loaded to find out). */
  public static boolean driverPresent(DeviceOptions options) {
    for (String p : new String[] {"/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1"}) {
      if (Files.exists(Path.of(p))) {
        return true;
      }
    }
    return false;
  }

  /** A usable cuda backend, or why there is none. */
  public static Backend load(DeviceOptions options) throws CudaUnavailableException {
    String[] searched = {"/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1"};
    for (String p : searched) {
      if (Files.exists(Path.of(p))) {
        throw new CudaUnavailableException("libcuda.so.1 found at " + p + " but the cuda backend is not built yet");
      }
    }
    throw new CudaUnavailableException("no NVIDIA driver (libcuda.so.1) in " + String.join(", ", searched));
  }
}
