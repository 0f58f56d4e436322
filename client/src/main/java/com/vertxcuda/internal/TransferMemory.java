package com.vertxcuda.internal;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import io.vertx.core.buffer.Buffer;

/**
 * The host memory a device lends its users for transfers: transfer buffers to fill and upload from,
 * and the landing of a download too large to lend at once. The memory the device copies from and to
 * fastest is pinned memory on cuda and the shared region in process isolation; elsewhere it is the
 * JVM's pooled direct memory. What is lent goes back at once on {@link #release}, or once
 * unreachable. Each layer that lends (a device's local route, its context tier) offers one of
 * these; any thread.
 */
public interface TransferMemory {

  /** Lends nothing: transfers stage through heap memory, and a download of any size is one request. */
  TransferMemory NONE = new TransferMemory() {
    @Override
    public Buffer allocate(int bytes) {
      throw new CudaException(FailureCode.OUT_OF_MEMORY, "the device lends no transfer buffers");
    }

    @Override
    public Buffer landing(int bytes) {
      return null;
    }

    @Override
    public boolean release(Buffer buffer) {
      return false;
    }

    @Override
    public boolean lends(Buffer buffer) {
      return false;
    }

    @Override
    public long limit() {
      return Long.MAX_VALUE;
    }

    @Override
    public long held() {
      return 0;
    }
  };

  /**
   * An empty buffer with room for {@code bytes} in this memory, to fill with the append methods: a
   * transfer buffer, which uploads with no host copy of the device's own. Array transfers to a device
   * in this JVM stage through these ({@link ChunkedTransfer}).
   *
   * @throws CudaException when none can be lent now (no ready context; past what may be lent)
   */
  Buffer allocate(int bytes);

  /**
   * Host memory of {@code bytes} (its length) for a download larger than may be lent at once, filled
   * chunk by chunk by the pump; it goes back on {@link #release} or once unreachable. Null: none now
   * (the caller lands in a heap array instead), as when the device's transfer budget has no room for it.
   */
  Buffer landing(int bytes);

  /** Returns a transfer buffer, or a buffer a download lent, at once; false if it is not one (or went back already). */
  boolean release(Buffer buffer);

  /**
   * Whether {@code buffer} is memory the device moves without a host copy of its own (pinned on cuda,
   * the shared region in process isolation): an upload from it is one request; from any other memory
   * a large one goes through the one pump ({@link ChunkedTransfer}).
   */
  boolean lends(Buffer buffer);

  /**
   * The most bytes users may hold of this memory at once, transfer buffers and downloads together
   * (the device's transfer budget, and three quarters of the shared region in process isolation); a
   * download larger than this goes in pieces.
   */
  long limit();

  /** Bytes of this memory lent to users now and not yet returned (released, or collected once unreachable). */
  long held();
}
