package com.vertxcuda.device.spi;

import com.vertxcuda.CudaException;
import com.vertxcuda.Library;

/**
 * One request as the context's submission thread sees it: what it is for, its body, its deadline,
 * and where its one answer goes. Answers may be given from any thread (the completion thread,
 * usually); the first one counts and later ones are dropped, so a request is answered exactly once
 * whatever races with it (context loss, a timeout, shutdown).
 */
public interface Request {

  /** The library it is for, or null for the device's own operations (alloc, copies, fills, ...). */
  Library library();

  Object body();

  /**
   * What kind of request it is (lane, admission, crossing): looked up once per process, when the
   * request is accepted ({@code RequestTable.admitted}), and read from here by everything after.
   */
  RequestType<?, ?> type();

  /**
   * The node that sent it, as the event bus says (this node for a request made in this JVM), or null
   * for the device's own requests: what it allocates or loads belongs to that node.
   */
  default String owner() {
    return null;
  }

  /** When the caller stops waiting, on the {@link System#nanoTime()} clock. */
  long deadline();

  /** Answers with success. */
  void reply(Object body);

  /** Answers with a typed failure. */
  void fail(CudaException failure);
}
