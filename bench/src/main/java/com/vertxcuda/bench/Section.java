package com.vertxcuda.bench;

import com.vertxcuda.device.DeviceOptions;

/**
 * One group of sweeps, measured through each path that can take it: raw JCuda (the baseline, on
 * cuda) and the toolkit as deployed in the run's isolation mode. What a path cannot measure it
 * leaves out, with a note in the record.
 */
interface Section {

  /** The name {@code --only} selects it by. */
  String name();

  /**
   * Measures what a first use costs, with a device of its own deployed with {@code options}, before
   * anything else of the toolkit ran in this JVM (after raw JCuda, which shares none of its memory).
   */
  default void firstUse(Bench bench, DeviceOptions options) throws Exception {
  }

  /** Measures the raw JCuda baseline. */
  default void raw(Bench bench, RawJCuda raw) throws Exception {
  }

  /** Measures through the toolkit's clients. */
  default void toolkit(Bench bench, DeployedDevice device) throws Exception {
  }

  /**
   * Measures the hops below the device verticle in this JVM (the backend's context alone, the context
   * tier's queue), with {@code options}; in the in_process run only, as they do not depend on the mode.
   */
  default void belowTheVerticle(Bench bench, DeviceOptions options) throws Exception {
  }

  /**
   * Measures with devices of its own, deployed with {@code options} (the run's backend and isolation),
   * after the shared one is gone.
   */
  default void alone(Bench bench, DeviceOptions options) throws Exception {
  }
}
