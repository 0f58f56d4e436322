package com.vertxcuda.device.spi;

import java.util.function.BooleanSupplier;

/**
 * A context that can inject faults on demand, for tests and drills. Both backends have it: the host
 * backend simulates each fault; the cuda backend causes the real thing (a kernel storing through an
 * unmapped address, a kernel that spins, an allocation the driver refuses, a launch the driver refuses).
 */
public interface FaultInjection {

  /** Queues work on {@code stream} that poisons the context, as a kernel storing through a bad pointer would. */
  void poison(GpuStream stream) throws BackendException;

  /** Makes the next allocation fail with OUT_OF_MEMORY. */
  void failNextAllocation();

  /** Makes the next queued operation fail (not sticky), as a failed library call does. */
  void failNextOperation();

  /**
   * Hangs the calling (submission) thread on {@code stream} while {@code keepStalling} holds, as a
   * thread waiting on a hung kernel would; returns once released and the stream is idle again.
   */
  void stall(GpuStream stream, BooleanSupplier keepStalling) throws BackendException;
}
