package com.vertxcuda.device.nvml;

import com.sun.jna.Library;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;

/**
 * The few functions of NVIDIA's management library ({@code libnvidia-ml.so.1}, nvml.h) the GPU meters
 * read, mapped by JNA. Every function returns an {@code nvmlReturn_t} ({@link #SUCCESS} or an error
 * code). Handles ({@code nvmlDevice_t}, {@code nvmlEventSet_t}) are opaque pointers. C structs are
 * passed as arrays of their members' width: {@code nvmlUtilization_t} as two unsigned ints (gpu,
 * memory), {@code nvmlMemory_t} as three unsigned long longs (total, free, used), {@code nvmlEventData_t}
 * as four longs (device, eventType, eventData, then gpuInstanceId and computeInstanceId packed in the
 * fourth).
 */
interface NvmlLibrary extends Library {

  int SUCCESS = 0;
  int ERROR_NOT_SUPPORTED = 3;
  int ERROR_TIMEOUT = 10;

  /** {@code NVML_TEMPERATURE_GPU}. */
  int TEMPERATURE_GPU = 0;
  /** {@code NVML_CLOCK_SM}. */
  int CLOCK_SM = 1;
  /** {@code NVML_CLOCK_MEM}. */
  int CLOCK_MEM = 2;
  /** {@code NVML_MEMORY_ERROR_TYPE_CORRECTED}. */
  int ECC_CORRECTED = 0;
  /** {@code NVML_MEMORY_ERROR_TYPE_UNCORRECTED}. */
  int ECC_UNCORRECTED = 1;
  /** {@code NVML_VOLATILE_ECC}: counts since the driver was loaded. */
  int ECC_VOLATILE = 0;
  /** {@code nvmlEventTypeXidCriticalError}. */
  long EVENT_XID_CRITICAL_ERROR = 0x8L;

  int nvmlInit_v2();

  String nvmlErrorString(int result);

  int nvmlDeviceGetHandleByPciBusId_v2(String pciBusId, PointerByReference device);

  int nvmlDeviceGetCount_v2(int[] count);

  int nvmlDeviceGetHandleByIndex_v2(int index, PointerByReference device);

  /** {@code nvmlPciInfo_t}: char busIdLegacy[16], then unsigned ints domain, bus, device... */
  int nvmlDeviceGetPciInfo_v3(Pointer device, byte[] pciInfo);

  int nvmlDeviceGetUtilizationRates(Pointer device, int[] utilization);

  int nvmlDeviceGetMemoryInfo(Pointer device, long[] memory);

  /** In milliwatts. */
  int nvmlDeviceGetPowerUsage(Pointer device, int[] milliwatts);

  /** In millijoules since the driver was loaded. */
  int nvmlDeviceGetTotalEnergyConsumption(Pointer device, long[] millijoules);

  int nvmlDeviceGetTemperature(Pointer device, int sensor, int[] celsius);

  /** In MHz. */
  int nvmlDeviceGetClockInfo(Pointer device, int clockType, int[] mhz);

  int nvmlDeviceGetCurrentClocksThrottleReasons(Pointer device, long[] reasons);

  int nvmlDeviceGetTotalEccErrors(Pointer device, int errorType, int counterType, long[] count);

  int nvmlEventSetCreate(PointerByReference set);

  int nvmlDeviceRegisterEvents(Pointer device, long eventTypes, Pointer set);

  int nvmlEventSetWait_v2(Pointer set, long[] data, int timeoutMs);

  int nvmlEventSetFree(Pointer set);
}
