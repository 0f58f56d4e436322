package com.vertxcuda.message;

import com.vertxcuda.Library;

/**
 * One step of a {@link RecordRequest}: the library that serves it (null for the device's own
 * operations: fills and copies) and its request body, exactly as it would be sent on its own.
 */
public final class PipelineStep {

  private final Library library;
  private final Object body;

  public PipelineStep(Library library, Object body) {
    this.library = library;
    this.body = body;
  }

  public Library library() { return library; }
  public Object body() { return body; }
}
