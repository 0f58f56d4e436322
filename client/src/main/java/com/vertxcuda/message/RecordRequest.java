package com.vertxcuda.message;

import java.util.List;

/**
 * Record a pipeline: its steps, in order, each a request body of the device or of one library.
 * Replied with a {@link com.vertxcuda.PipelineHandle}. Sent by {@link com.vertxcuda.PipelineRecorder#build()}.
 * Its JSON form names each step's wire type, so the codec package reads and writes it
 * ({@code codec.RecordRequestJson}).
 */
public class RecordRequest {

  /** Most steps one pipeline holds. */
  public static final int MAX_STEPS = 1024;

  private final List<PipelineStep> steps;

  public RecordRequest(List<PipelineStep> steps) {
    this.steps = steps;
  }

  public List<PipelineStep> getSteps() { return steps; }
}
