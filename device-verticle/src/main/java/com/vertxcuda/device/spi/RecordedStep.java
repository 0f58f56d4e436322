package com.vertxcuda.device.spi;

import java.util.List;

/**
 * One checked step of a recorded pipeline: the stream its work goes on, the buffers it reads and
 * writes, and the work itself, which only queues device work on that stream (no event, no answer,
 * no host memory): it is issued once under stream capture on cuda, or once per replay where
 * the backend has no graphs.
 */
public interface RecordedStep extends AutoCloseable {

  GpuStream stream();

  List<? extends DeviceBuffer> reads();

  List<? extends DeviceBuffer> writes();

  /**
   * Keys of what the step uses besides its buffers (a kernel's module, {@link Footprint}): a replay
   * reads them, so a request that writes one (an unload) waits for a replay sent before it.
   */
  default long[] keys() {
    return new long[0];
  }

  /**
   * A replay of the pipeline as one graph was queued on another stream than {@link #stream()}, done
   * at {@code event} (not retained: retain it to keep it): what the step uses besides its buffers
   * must outlive it. On the submission thread.
   */
  default void launchedIn(GpuEvent event) {
  }

  /** Queues the step's work on {@link #stream()}; on the submission thread, already ordered. */
  void issue() throws BackendException;

  /**
   * Throws a typed failure when something the step uses besides its buffers is gone (an unloaded
   * module); the buffers the pipeline checks itself. On the submission thread, before each replay.
   */
  default void check() {
  }

  /** Releases what the step holds; on the submission thread. */
  @Override
  default void close() {
  }
}
