package com.vertxcuda.device.isolation;

import com.vertxcuda.impl.VertxInternals;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.context.Transfers;
import com.vertxcuda.device.impl.HostBufferPool;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.message.DownloadReply;
import com.vertxcuda.message.DownloadRequest;
import com.vertxcuda.message.UploadRequest;
import io.vertx.core.buffer.Buffer;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Uploads and downloads of a process tier through its shared region: the bytes never cross the
 * link. A transfer that fits a slot is one request (no host copy at all for an upload from a
 * transfer buffer, or for a download, which comes back as a buffer over its slot). A larger one
 * goes in chunks through one slot, one chunk after the other; its first chunk takes the
 * transfer's place in the context's order and keeps it for the whole transfer (the device host
 * holds later requests on the same buffer until the last chunk is queued).
 *
 * <p>What users hold of the region (downloads lent over it, transfer buffers) is bounded
 * ({@link SharedRegion#heldLimit}): a download that would pass the bound is copied out instead, in
 * chunks of at most an eighth of the region, into pooled host memory, as in-process downloads are.
 * It still succeeds, at the cost of one host copy, and the other half of the region stays free
 * for everyone's transfers in flight. The bound is on all users together, not per requester: a
 * request carries no identity a requester could not forge or rotate (the reply address is new for
 * every message, a client id would be self-declared), so a per-requester quota would stop no one
 * who meant harm.
 */
final class SharedTransfers {

  private final SharedRegion region;
  private final ProcessContextTier tier;
  private final AtomicLong transfers = new AtomicLong();
  /** Downloads up to this many bytes are copied out of the region instead of lent over it. */
  static final int COPIED_OUT = 256 << 10;
  /**
   * Bytes copied on the thread that submits an upload (the caller's, often an event loop), at most:
   * a larger upload goes in chunks whose first is this large and whose others are copied on the copy
   * threads.
   */
  static final int INLINE_COPY = 1 << 20;

  SharedTransfers(SharedRegion region, ProcessContextTier tier) {
    this.region = region;
    this.tier = tier;
  }

  void upload(Request r, UploadRequest u) {
    BufferHandle h = u.getHandle();
    Buffer data = u.getData();
    try {
      Transfers.checkUpload(h, data.length());
    } catch (CudaException refusal) {
      refuse(r, new BufferHandle(h.node(), h.device(), h.generation(), h.id(), h.dtype(), h.count(),
        h.tokenHigh(), h.tokenLow(), 0, 0), refusal);
      return;
    }
    long at = data.length() == 0 ? 0 : region.offsetOf(data);
    if (at >= 0) {
      tier.send(r, new SharedTransfer(h, at, data.length(), true, 0, 0), answer(r, () -> h, () -> { }));
      return;
    }
    ByteBuffer src = VertxInternals.byteBuf(data).nioBuffer();
    if (data.length() <= INLINE_COPY && data.length() <= region.largestSlot()) {
      long slot = slot(data.length());
      region.slice(slot, data.length()).put(src);
      tier.send(r, new SharedTransfer(h, slot, data.length(), true, 0, 0),
        answer(r, () -> h, () -> region.release(slot, data.length())));
      return;
    }
    // Through one slot of at most an eighth of the region, as a large download: several such
    // transfers in flight (a client's pieces) leave the rest of the region to others. Only the first
    // chunk, which takes the transfer's place in the order, is copied on this (the caller's) thread,
    // and it is small; the rest are copied on the copy threads.
    new Chunks(r, h, true, src, Math.min(region.largestSlot(), region.size() / 8)).next(0);
  }

  void download(Request r, BufferHandle h) {
    try {
      Transfers.checkView(h);
      Transfers.checkDownload(h, Math.min(h.byteLength(), Transfers.MAX_DOWNLOAD));
    } catch (CudaException refusal) {
      // The device host answers it as it answers in-process: its handle checks, then the same transfer rules.
      refuse(r, h, refusal);
      return;
    }
    int length = (int) h.byteLength();
    if (length <= COPIED_OUT) {
      // Small: copied out of the region at once, so no slot stays lent to a buffer the user keeps.
      long slot = slot(length);
      tier.send(r, new SharedTransfer(h, slot, length, false, 0, 0), answer(r, () -> {
        Buffer copy = Buffer.buffer(length);
        byte[] bytes = new byte[length];
        region.slice(slot, length).get(bytes);
        return new DownloadReply(h, copy.appendBytes(bytes));
      }, () -> region.release(slot, length)));
      return;
    }
    if (length <= region.largestSlot() && region.hold(length)) {
      long slot;
      try {
        slot = slot(length);
      } catch (CudaException e) {
        region.unhold(length);
        throw e;
      }
      // On success the slot goes with the buffer over it, and returns when that is released.
      tier.send(r, new SharedTransfer(h, slot, length, false, 0, 0), new ProcessContextTier.Call() {
        @Override
        public void replied(Object body) {
          r.reply(new DownloadReply(h, region.buffer(slot, length, length)));
        }

        @Override
        public void failed(CudaException failure) {
          region.release(slot, length);
          region.unhold(length);
          r.fail(failure);
        }
      });
      return;
    }
    // Larger than a slot, or users already hold all they may: copied out, in bounded chunks.
    new Chunks(r, h, false, null, Math.min(region.largestSlot(), region.size() / 8)).next(0);
  }

  /** One transfer in chunks through one slot, each chunk sent when the previous one is done. */
  private final class Chunks {
    final Request request;
    final BufferHandle handle;
    final boolean toDevice;
    final ByteBuffer source;
    final long transfer = transfers.incrementAndGet();
    final long perChunk;
    final long slot;
    /** A download's bytes, in pooled host memory. */
    ByteBuffer assembled;

    Chunks(Request request, BufferHandle handle, boolean toDevice, ByteBuffer source, long chunkBytes) {
      this.request = request;
      this.handle = handle;
      this.toDevice = toDevice;
      this.source = source;
      int size = handle.dtype().size();
      // No larger than the transfer: 16 concurrent 8 MiB uploads each took a 256 MiB slot and ran
      // out of region (QUEUE_FULL).
      this.perChunk = Math.min(Math.max(size, chunkBytes / size * size), Math.max(size, handle.byteLength()));
      this.slot = slot(perChunk);
    }

    void next(long from) {
      // An upload's first chunk is small: it is copied on the submitting thread.
      long n = Math.min(toDevice && from == 0 ? Math.min(perChunk, INLINE_COPY) : perChunk, handle.byteLength() - from);
      if (toDevice) {
        com.vertxcuda.impl.CopyThreads.copy(source.slice((int) from, (int) n), region.slice(slot, n));
      }
      tier.send(request, new SharedTransfer(handle, slot, n, toDevice, transfer, from), new ProcessContextTier.Call() {
        @Override
        public void replied(Object body) {
          if (!toDevice) {
            if (assembled == null) {
              // Taken once the first chunk came back: by then the context has checked the handle.
              assembled = HostBufferPool.shared().take((int) handle.byteLength());
            }
            com.vertxcuda.impl.CopyThreads.copy(region.slice(slot, n), assembled);
          }
          if (from + n >= handle.byteLength()) {
            region.release(slot, perChunk);
            request.reply(toDevice ? handle : new DownloadReply(handle,
              HostBufferPool.shared().lease(assembled.flip(), (int) handle.byteLength())));
          } else if (toDevice) {
            // Off the link's reader: the next chunk's bytes are copied on a copy thread.
            com.vertxcuda.impl.CopyThreads.execute(() -> next(from + n));
          } else {
            next(from + n);
          }
        }

        @Override
        public void failed(CudaException failure) {
          region.release(slot, perChunk);
          if (assembled != null) {
            HostBufferPool.shared().give(assembled);
          }
          request.fail(failure);
        }
      });
    }
  }

  /**
   * A transfer refused here by the handle's own claims. The device host still validates the handle
   * first ({@code AllocationTable}, by a download of {@code probe}: the handle itself, or for an
   * upload a view of none of its elements), so a caller without the buffer's token gets FORBIDDEN,
   * as in-process, and learns nothing from the shape it claimed. Only a handle that passes gets
   * {@code refusal}, unless the device host refuses it more precisely first.
   */
  private void refuse(Request r, BufferHandle probe, CudaException refusal) {
    tier.send(r, new DownloadRequest(probe), new ProcessContextTier.Call() {
      @Override
      public void replied(Object body) {
        r.fail(refusal);
      }

      @Override
      public void failed(CudaException failure) {
        r.fail(failure);
      }
    });
  }

  private ProcessContextTier.Call answer(Request r, java.util.function.Supplier<Object> reply, Runnable cleanup) {
    return new ProcessContextTier.Call() {
      @Override
      public void replied(Object body) {
        Object out = reply.get();
        cleanup.run();
        r.reply(out);
      }

      @Override
      public void failed(CudaException failure) {
        cleanup.run();
        r.fail(failure);
      }
    };
  }

  private long slot(long bytes) {
    long slot = region.allocate(bytes);
    if (slot < 0) {
      throw new CudaException(FailureCode.QUEUE_FULL, "the shared region has no free " + bytes
        + "-byte slot now; retry when transfers in flight have finished");
    }
    return slot;
  }

  Buffer allocateTransferBuffer(int bytes) {
    if (!region.hold(bytes)) {
      throw new CudaException(FailureCode.OUT_OF_MEMORY, "transfer buffers and downloads lent over the shared "
        + "region may hold at most " + region.heldLimit() + " bytes (half of sharedMemorySize) together; "
        + region.held() + " are held, " + bytes + " more asked for: release some (releaseTransferBuffer)");
    }
    long offset = region.allocate(bytes);
    if (offset < 0) {
      region.unhold(bytes);
      throw new CudaException(FailureCode.OUT_OF_MEMORY, "the shared region has no free " + bytes + "-byte slot");
    }
    return region.buffer(offset, bytes, 0);
  }

  /** Whether {@code buffer} lies in the region (an upload from it crosses without a copy). */
  boolean lends(Buffer buffer) {
    return buffer.length() > 0 && region.offsetOf(buffer) >= 0;
  }

  /** What users may hold of the region at once ({@link SharedRegion#heldLimit}). */
  long lendingLimit() {
    return region.heldLimit();
  }

  /** What users hold of the region now. */
  long heldBytes() {
    return region.held();
  }

  /** Returns a transfer buffer, or a downloaded one (lent over the region or copied out), now. */
  boolean releaseTransferBuffer(Buffer buffer) {
    return region.releaseBuffer(buffer) || HostBufferPool.shared().release(buffer);
  }
}
