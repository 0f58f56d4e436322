package com.vertxcuda.device.impl;

import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.device.cuda.CudaBackend;
import com.vertxcuda.device.cuda.CudaErrors;
import java.io.File;

/**
 * What the device tier decides about backends without loading any native library into this JVM:
 * where the context tier runs, how many devices a node serves, whether this process's use of a GPU
 * is poisoned. Which backend a context opens is {@code context.BackendSelection}'s.
 */
public final class Backends {

  private Backends() {
  }

  /**
   * Where the context tier runs: as configured, or for {@code auto}, in a device-host process when
   * the backend will be cuda (a sticky error then costs that process) and in-process on the host
   * backend. Decided without loading any native library into this JVM.
   */
  public static Isolation isolation(DeviceOptions options) {
    if (options.getIsolation() != Isolation.AUTO) {
      return options.getIsolation();
    }
    boolean cuda = options.getBackend() == BackendKind.CUDA
      || (options.getBackend() == BackendKind.AUTO && CudaBackend.driverPresent(options));
    return cuda ? Isolation.PROCESS : Isolation.IN_PROCESS;
  }

  /**
   * The sticky error that ended this process's use of a GPU, or null. Only cuda poisons a whole
   * process; while this is null an in-process context that was lost (hung, failed) can be rebuilt.
   */
  public static String processPoisonedBy() {
    return CudaErrors.poisonedBy();
  }

  /**
   * How many devices a node serving every visible device deploys: on the host backend (asked for,
   * or {@code auto} without a driver) {@code hostDevices} simulated ones; otherwise the GPUs the
   * driver exposes, counted without loading any native library into this JVM:
   * {@code CUDA_VISIBLE_DEVICES} when set (its entries up to the first empty one, as the driver
   * reads it), else the GPUs under {@code /proc/driver/nvidia/gpus}, else the {@code /dev/nvidiaN}
   * nodes. {@code auto} with a driver but no GPU found counts the host's simulated devices.
   */
  public static int visibleDevices(DeviceOptions options, int hostDevices) {
    if (options.getBackend() == BackendKind.HOST) {
      return hostDevices;
    }
    int gpus = CudaBackend.driverPresent(options) ? gpusVisible(System.getenv("CUDA_VISIBLE_DEVICES")) : 0;
    if (options.getBackend() == BackendKind.CUDA) {
      return gpus;
    }
    return gpus > 0 ? gpus : hostDevices;
  }

  static int gpusVisible(String cudaVisibleDevices) {
    if (cudaVisibleDevices != null) {
      int n = 0;
      for (String entry : cudaVisibleDevices.split(",", -1)) {
        if (entry.isBlank() || entry.trim().startsWith("-")) {
          break; // the driver stops at the first invalid entry
        }
        n++;
      }
      return n;
    }
    File[] gpus = new File("/proc/driver/nvidia/gpus").listFiles();
    if (gpus != null && gpus.length > 0) {
      return gpus.length;
    }
    String[] nodes = new File("/dev").list((dir, name) -> name.matches("nvidia[0-9]+"));
    return nodes == null ? 0 : nodes.length;
  }
}
