package com.vertxcuda.device.spi;

/**
 * The part of the one submission path that serves one library (or the device's own operations).
 * Every method runs on the context's submission thread, one request at a time, in the order the
 * device accepted them: that order is the order in which requests claim their buffers.
 */
public interface RequestHandler {

  /**
   * What the request reads and writes. Asked only while an earlier request waits for its
   * preparation: a request that touches what a waiting one touches waits behind it; others go on.
   * A body it cannot read may answer {@link Footprint#EVERYTHING}.
   */
  Footprint footprint(Object body);

  /**
   * Validates, resolves, orders and queues the request, and arranges its answer (or answers it).
   * Returns null when done, or a {@link Preparation} to run first: the request is then submitted
   * again, with the preparation's result as {@code prepared}, once it is ready and every earlier
   * request that touches the same buffers has gone. Anything thrown answers the request through
   * the context's failure mapping.
   *
   * @param prepared null on the first submission; the preparation's result on the second
   */
  Preparation submit(Request request, Object prepared) throws Exception;

  /**
   * Queues work held back from earlier {@link #submit} calls (a batch of small GEMMs collected
   * from consecutive requests). The submission thread calls it before it serves a request of
   * another handler and whenever its queue is empty, so held work never waits for later work.
   */
  default void flush() {
  }
}
