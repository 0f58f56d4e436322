package com.vertxcuda.device;

/** Which backend a device uses. */
public enum BackendKind {
  /** cuda where a usable GPU and driver are present, otherwise host (with one log line saying why). */
  AUTO,
  /** JCuda; deployment fails, naming what was searched, when no GPU can be used. */
  CUDA,
  /** Pure Java on the CPU, computing the same results; can inject faults. */
  HOST
}
