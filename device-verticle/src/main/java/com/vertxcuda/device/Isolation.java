package com.vertxcuda.device;

/** Where the context tier runs. */
public enum Isolation {
  /** process for the cuda backend, in-process for the host backend. */
  AUTO,
  /** In the application's JVM: lowest latency; a sticky CUDA error marks the device LOST. */
  IN_PROCESS,
  /** In a supervised device-host process: a sticky error costs that process, which is replaced. */
  PROCESS
}
