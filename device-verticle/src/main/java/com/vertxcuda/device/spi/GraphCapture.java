package com.vertxcuda.device.spi;

import java.util.List;

/**
 * A backend that can capture work queued on its streams as one graph and launch it again (CUDA
 * stream capture). A backend without it replays recorded pipelines step by step.
 */
public interface GraphCapture {

  /** One step to capture: work that queues on {@code stream}. */
  record Step(GpuStream stream, LibraryContext.Work work) {
  }

  /** A captured, instantiated graph. */
  interface Graph {

    /** Queues one run of the whole graph on {@code stream}. */
    void launch(GpuStream stream) throws BackendException;

    /** Destroys the graph; when {@code poisoned}, without calling into the device. */
    void close(boolean poisoned);
  }

  /**
   * Captures the steps, in order, starting on {@code origin}: each step's stream joins the capture
   * after everything captured before it and {@code origin} joins back after it, so the steps of the
   * graph run one after another. Nothing runs now. A step that throws, or work that capture
   * refuses, ends the capture and throws; nothing is left captured.
   */
  Graph capture(GpuStream origin, List<Step> steps) throws BackendException;
}
