package com.vertxcuda.device.spi;

/** A context that can inject faults on demand (the host backend), for tests and drills. */
public interface FaultInjection {

  /** Queues work on {@code stream} that poisons the context, as a kernel storing through a bad pointer would. */
  void poison(GpuStream stream) throws BackendException;

  /** Makes the next allocation fail with OUT_OF_MEMORY. */
  void failNextAllocation();

  /** Makes the next queued operation fail (not sticky), as a failed library call does. */
  void failNextOperation();
}
