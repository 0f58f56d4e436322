package com.vertxcuda.device.isolation;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.context.Transfers;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.message.DownloadReply;
import com.vertxcuda.message.UploadRequest;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.buffer.BufferInternal;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Uploads and downloads of a process tier through its shared region: the bytes never cross the
 * link. A transfer that fits a slot is one request (no host copy at all for an upload from a
 * transfer buffer, or for a download, which comes back as a buffer over its slot). A larger one
 * goes in chunks through one slot, one chunk after the other; its first chunk takes the
 * transfer's place in the context's order and keeps it for the whole transfer (the device host
 * holds later requests on the same buffer until the last chunk is queued).
 */
final class SharedTransfers {

  private final SharedRegion region;
  private final ProcessContextTier tier;
  private final AtomicLong transfers = new AtomicLong();
  /** Downloads up to this many bytes are copied out of the region instead of lent over it. */
  static final int COPIED_OUT = 256 << 10;

  SharedTransfers(SharedRegion region, ProcessContextTier tier) {
    this.region = region;
    this.tier = tier;
  }

  void upload(Request r, UploadRequest u) {
    BufferHandle h = u.getHandle();
    Buffer data = u.getData();
    Transfers.checkUpload(h, data.length());
    long at = data.length() == 0 ? 0 : region.offsetOf(data);
    if (at >= 0) {
      tier.send(r, new SharedTransfer(h, at, data.length(), true, 0, 0), answer(r, () -> h, () -> { }));
      return;
    }
    ByteBuffer src = ((BufferInternal) data).getByteBuf().nioBuffer();
    if (data.length() <= region.largestSlot()) {
      long slot = slot(data.length());
      region.slice(slot, data.length()).put(src);
      tier.send(r, new SharedTransfer(h, slot, data.length(), true, 0, 0),
        answer(r, () -> h, () -> region.release(slot, data.length())));
      return;
    }
    new Chunks(r, h, true, src).next(0);
  }

  void download(Request r, BufferHandle h) {
    Transfers.checkDownload(h, Math.min(h.byteLength(), Transfers.MAX_DOWNLOAD));
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
    if (length <= region.largestSlot()) {
      long slot = slot(length);
      // On success the slot goes with the buffer over it, and returns when that is released.
      tier.send(r, new SharedTransfer(h, slot, length, false, 0, 0), new ProcessContextTier.Call() {
        @Override
        public void replied(Object body) {
          r.reply(new DownloadReply(h, region.buffer(slot, length, length)));
        }

        @Override
        public void failed(CudaException failure) {
          region.release(slot, length);
          r.fail(failure);
        }
      });
      return;
    }
    new Chunks(r, h, false, null).next(0);
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
    Buffer assembled;

    Chunks(Request request, BufferHandle handle, boolean toDevice, ByteBuffer source) {
      this.request = request;
      this.handle = handle;
      this.toDevice = toDevice;
      this.source = source;
      int size = handle.dtype().size();
      this.perChunk = Math.max(size, region.largestSlot() / size * size);
      this.slot = slot(perChunk);
    }

    void next(long from) {
      long n = Math.min(perChunk, handle.byteLength() - from);
      if (toDevice) {
        region.slice(slot, n).put(source.slice((int) from, (int) n));
      }
      tier.send(request, new SharedTransfer(handle, slot, n, toDevice, transfer, from), new ProcessContextTier.Call() {
        @Override
        public void replied(Object body) {
          if (!toDevice) {
            if (assembled == null) {
              // Allocated once the first chunk came back: by then the context has checked the handle.
              assembled = Buffer.buffer((int) handle.byteLength());
            }
            byte[] bytes = new byte[(int) n];
            region.slice(slot, n).get(bytes);
            assembled.appendBytes(bytes);
          }
          if (from + n >= handle.byteLength()) {
            region.release(slot, perChunk);
            request.reply(toDevice ? handle : new DownloadReply(handle, assembled));
          } else {
            next(from + n);
          }
        }

        @Override
        public void failed(CudaException failure) {
          region.release(slot, perChunk);
          request.fail(failure);
        }
      });
    }
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
    long offset = region.allocate(bytes);
    if (offset < 0) {
      throw new CudaException(FailureCode.OUT_OF_MEMORY, "the shared region has no free " + bytes + "-byte slot");
    }
    return region.buffer(offset, bytes, 0);
  }

  boolean releaseTransferBuffer(Buffer buffer) {
    return region.releaseBuffer(buffer);
  }
}
