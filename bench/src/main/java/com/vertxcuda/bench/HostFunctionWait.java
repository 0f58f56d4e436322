package com.vertxcuda.bench;

import jcuda.driver.JCudaDriver;

/**
 * Raw JCuda's completion without a synchronize: a host function queued after the work sets a flag
 * the caller spins on (the wake-up a completion thread would give).
 */
final class HostFunctionWait {

  private final RawJCuda raw;
  private volatile boolean done;

  HostFunctionWait(RawJCuda raw) {
    this.raw = raw;
  }

  /** Queues the host function behind what the raw stream holds and spins until it has run. */
  void await() {
    done = false;
    JCudaDriver.cuLaunchHostFunc(raw.stream, data -> ((HostFunctionWait) data).done = true, this);
    while (!done) {
      Thread.onSpinWait();
    }
  }
}
