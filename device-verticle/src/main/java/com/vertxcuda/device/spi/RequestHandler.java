package com.vertxcuda.device.spi;

import java.util.List;

/**
 * The part of the one submission path that serves one library (or the device's own operations):
 * the request types it serves, one {@link RequestType} descriptor each, whose functions it is
 * handed to. Every call runs on the context's submission thread, one request at a time, in the
 * order the device accepted them: that order is the order in which requests claim their buffers.
 * A body no descriptor names is answered BAD_REQUEST ("does not serve"), and so is one the wire
 * could not read, without reaching the handler.
 */
public interface RequestHandler {

  /**
   * The descriptors of the request types it serves, each over this handler's class (the
   * descriptor's handler type); asked once, when it is registered.
   */
  List<RequestType<?, ?>> types();

  /**
   * Queues work held back from earlier submissions (a batch of small GEMMs collected from
   * consecutive requests). The submission thread calls it before it serves a request of another
   * handler or runs a task, and when its queue is empty unless {@link #holdsWhileBusy} says otherwise,
   * so held work never waits for later work.
   */
  default void flush() {
  }

  /**
   * Asked on the submission thread when its queue runs dry with this handler's work held: true
   * keeps it held, which a handler may answer only while work it queued earlier is still on the GPU
   * and only if it then asks the submission thread to flush ({@link LibraryContext#onSubmissionThread})
   * as soon as that work is done. Held work then waits at most for the device to finish what it was
   * already doing, batched with whatever arrives meanwhile; on an idle device it waits for nothing.
   */
  default boolean holdsWhileBusy() {
    return false;
  }
}
