package com.vertxcuda.device.spi;

/**
 * A {@link RequestHandler} whose requests can be steps of a recorded pipeline. On the submission
 * thread, like {@link RequestHandler#submit}.
 */
public interface Recordable {

  /**
   * Checks {@code body} as one step of a pipeline and resolves what it uses, making now, eagerly,
   * whatever its work would otherwise make lazily (a plan, a function lookup): the step's work may
   * be issued under CUDA stream capture, where nothing may allocate or synchronise. Throws a typed
   * failure (BAD_REQUEST for a request that cannot be recorded, naming why); nothing is queued.
   */
  RecordedStep record(Object body) throws Exception;
}
