package com.vertxcuda.device.nvml;

import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import com.vertxcuda.GpuReadings;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * NVIDIA's management library, loaded and initialised once per process: the GPU meters of the devices
 * this process serves. Every method blocks in the driver (milliseconds at times): call it from a
 * thread of its own ({@link GpuSampler}) or a command line, never an event loop. Where the library
 * cannot be loaded (no NVIDIA driver, the host backend) {@link #get()} answers null and nothing else
 * changes.
 */
public final class Nvml {

  private static final System.Logger LOG = System.getLogger(Nvml.class.getName());

  private static Nvml instance;
  private static boolean tried;

  private final NvmlLibrary lib;

  private Nvml(NvmlLibrary lib) {
    this.lib = lib;
  }

  /** The process's NVML, loaded and initialised on the first call (blocking); null where there is none. */
  public static synchronized Nvml get() {
    if (!tried) {
      tried = true;
      try {
        NvmlLibrary lib = Native.load("nvidia-ml", NvmlLibrary.class);
        int rc = lib.nvmlInit_v2();
        if (rc == NvmlLibrary.SUCCESS) {
          instance = new Nvml(lib);
        } else {
          LOG.log(System.Logger.Level.INFO, "NVML did not initialise (" + rc + "): no GPU meters");
        }
      } catch (LinkageError | RuntimeException e) {
        // No libnvidia-ml.so.1 (no driver) or no JNA native for this platform: no meters, nothing fails.
        LOG.log(System.Logger.Level.DEBUG, "NVML is not available: " + e);
      }
    }
    return instance;
  }

  /** The GPU at {@code pciBusId} as CUDA names it ("0000:3B:00.0"), or null when NVML knows none there. */
  public Device device(String pciBusId) {
    PointerByReference ref = new PointerByReference();
    if (lib.nvmlDeviceGetHandleByPciBusId_v2(pciBusId, ref) == NvmlLibrary.SUCCESS) {
      return new Device(ref.getValue(), pciBusId);
    }
    // NVML writes the domain with 8 digits, CUDA with 4: match on the numbers instead.
    int[] wanted = busNumbers(pciBusId);
    int[] count = new int[1];
    if (wanted == null || lib.nvmlDeviceGetCount_v2(count) != NvmlLibrary.SUCCESS) {
      return null;
    }
    for (int i = 0; i < count[0]; i++) {
      byte[] info = new byte[128];
      if (lib.nvmlDeviceGetHandleByIndex_v2(i, ref) != NvmlLibrary.SUCCESS
        || lib.nvmlDeviceGetPciInfo_v3(ref.getValue(), info) != NvmlLibrary.SUCCESS) {
        continue;
      }
      ByteBuffer b = ByteBuffer.wrap(info).order(ByteOrder.nativeOrder());
      if (b.getInt(16) == wanted[0] && b.getInt(20) == wanted[1] && b.getInt(24) == wanted[2]) {
        return new Device(ref.getValue(), pciBusId);
      }
    }
    return null;
  }

  // "domain:bus:device.function" in hex.
  static int[] busNumbers(String pciBusId) {
    String[] parts = pciBusId.trim().split("[:.]");
    if (parts.length != 4) {
      return null;
    }
    try {
      return new int[] {Integer.parseUnsignedInt(parts[0], 16), Integer.parseInt(parts[1], 16), Integer.parseInt(parts[2], 16)};
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** Reads {@code pciBusId}'s meters once (for a command line); null without NVML or such a GPU. */
  public static GpuReadings readOnce(String pciBusId) {
    Nvml nvml = pciBusId == null || pciBusId.isEmpty() ? null : get();
    Device device = nvml == null ? null : nvml.device(pciBusId);
    return device == null ? null : device.read(0, 0);
  }

  /** One GPU as NVML knows it. */
  public final class Device {
    private final Pointer handle;
    private final String pciBusId;

    private Device(Pointer handle, String pciBusId) {
      this.handle = handle;
      this.pciBusId = pciBusId;
    }

    /** Volatile ECC error counts (corrected, uncorrected) since the driver loaded; -1 where ECC is off or unsupported. */
    long[] eccCounts() {
      return new long[] {ecc(NvmlLibrary.ECC_CORRECTED), ecc(NvmlLibrary.ECC_UNCORRECTED)};
    }

    private long ecc(int type) {
      long[] count = new long[1];
      return call(() -> lib.nvmlDeviceGetTotalEccErrors(handle, type, NvmlLibrary.ECC_VOLATILE, count)) ? count[0] : -1;
    }

    /**
     * Every meter, read now; ECC counts are given less {@code eccCorrectedBase} and
     * {@code eccUncorrectedBase} (the counts when watching began). What the GPU does not support reads -1.
     */
    GpuReadings read(long eccCorrectedBase, long eccUncorrectedBase) {
      GpuReadings r = new GpuReadings().setPciBusId(pciBusId);
      int[] two = new int[2];
      if (call(() -> lib.nvmlDeviceGetUtilizationRates(handle, two))) {
        r.setUtilizationPercent(two[0]).setMemoryUtilizationPercent(two[1]);
      }
      long[] memory = new long[3];
      if (call(() -> lib.nvmlDeviceGetMemoryInfo(handle, memory))) {
        r.setMemoryTotalBytes(memory[0]).setMemoryUsedBytes(memory[2]);
      }
      int[] one = new int[1];
      if (call(() -> lib.nvmlDeviceGetPowerUsage(handle, one))) {
        r.setPowerWatts(Integer.toUnsignedLong(one[0]) / 1000.0);
      }
      long[] wide = new long[1];
      if (call(() -> lib.nvmlDeviceGetTotalEnergyConsumption(handle, wide))) {
        r.setEnergyJoules(wide[0] / 1000.0);
      }
      if (call(() -> lib.nvmlDeviceGetTemperature(handle, NvmlLibrary.TEMPERATURE_GPU, one))) {
        r.setTemperatureCelsius(one[0]);
      }
      if (call(() -> lib.nvmlDeviceGetClockInfo(handle, NvmlLibrary.CLOCK_SM, one))) {
        r.setSmClockHz(Integer.toUnsignedLong(one[0]) * 1_000_000L);
      }
      if (call(() -> lib.nvmlDeviceGetClockInfo(handle, NvmlLibrary.CLOCK_MEM, one))) {
        r.setMemoryClockHz(Integer.toUnsignedLong(one[0]) * 1_000_000L);
      }
      if (call(() -> lib.nvmlDeviceGetCurrentClocksThrottleReasons(handle, wide))) {
        r.setThrottleReasons(wide[0]);
      }
      long[] ecc = eccCounts();
      r.setEccCorrectedErrors(ecc[0] < 0 ? -1 : Math.max(0, ecc[0] - eccCorrectedBase));
      r.setEccUncorrectedErrors(ecc[1] < 0 ? -1 : Math.max(0, ecc[1] - eccUncorrectedBase));
      return r.setReadAt(System.currentTimeMillis());
    }

    /** Registers for XID errors; null where the GPU cannot report them. */
    Pointer xidEvents() {
      PointerByReference set = new PointerByReference();
      if (!call(() -> lib.nvmlEventSetCreate(set))) {
        return null;
      }
      if (!call(() -> lib.nvmlDeviceRegisterEvents(handle, NvmlLibrary.EVENT_XID_CRITICAL_ERROR, set.getValue()))) {
        lib.nvmlEventSetFree(set.getValue());
        return null;
      }
      return set.getValue();
    }

    /**
     * Waits up to {@code timeoutMs} for an XID error: its number, 0 when none came in time, -1 when
     * the wait failed (the set is then of no more use).
     */
    long awaitXid(Pointer set, int timeoutMs) {
      long[] data = new long[4];
      int rc = lib.nvmlEventSetWait_v2(set, data, timeoutMs);
      if (rc == NvmlLibrary.ERROR_TIMEOUT) {
        return 0;
      }
      if (rc != NvmlLibrary.SUCCESS) {
        LOG.log(System.Logger.Level.WARNING, pciBusId + ": waiting for XID errors failed: " + lib.nvmlErrorString(rc));
        return -1;
      }
      return (data[1] & NvmlLibrary.EVENT_XID_CRITICAL_ERROR) != 0 ? Math.max(1, data[2]) : 0;
    }

    void free(Pointer set) {
      lib.nvmlEventSetFree(set);
    }
  }

  // A function an older driver lacks reads as unsupported.
  private static boolean call(java.util.function.IntSupplier f) {
    try {
      return f.getAsInt() == NvmlLibrary.SUCCESS;
    } catch (UnsatisfiedLinkError e) {
      return false;
    }
  }
}
