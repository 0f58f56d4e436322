package com.vertxcuda.device.isolation;

import com.vertxcuda.Failures;
import com.vertxcuda.device.context.InFlight;
import com.vertxcuda.device.memory.LentBuffers;
import com.vertxcuda.internal.CopyThreads;
import com.vertxcuda.internal.TransferMemory;
import com.vertxcuda.internal.VertxInternals;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.context.SharedTransfer;
import com.vertxcuda.device.context.Transfers;
import com.vertxcuda.device.memory.HostBufferPool;
import com.vertxcuda.device.memory.HostTransferMemory;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.message.DownloadReply;
import com.vertxcuda.message.DownloadRequest;
import com.vertxcuda.message.UploadRequest;
import com.vertxcuda.PipelineHandle;
import com.vertxcuda.message.DownloadIntoRequest;
import com.vertxcuda.message.PipelineStep;
import com.vertxcuda.message.RecordRequest;
import io.vertx.core.buffer.Buffer;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Uploads and downloads of a process tier through its shared region: the bytes never cross the
 * link, and each request is one view in one slot. An upload from a transfer buffer (memory of the
 * region) crosses with no host copy at all; a download comes back as a buffer over its slot. What
 * is larger than that never comes here in one piece: the one pump ({@code ChunkedTransfer}) splits
 * it into views first, for local clients and for requests from the event bus alike ({@code Admission}).
 *
 * <p>What users hold of the region (downloads lent over it, transfer buffers) is bounded
 * ({@link SharedRegion#heldLimit}): a download that would pass the bound is copied out instead, on
 * a copy thread, into pooled host memory, as in-process downloads are. It still succeeds, at the
 * cost of one host copy, and a quarter of the region stays free for everyone's transfers in
 * flight. The bound is on all users together, not per requester: a request carries no identity a
 * requester could not forge or rotate (the reply address is new for every message, a client id
 * would be self-declared), so a per-requester quota would stop no one who meant harm.
 */
final class SharedTransfers {

  private final SharedRegion region;
  private final ProcessContextTier tier;
  /** The transfer buffers each recorded pipeline holds, by pipeline id, until it is released. */
  private final Map<Long, List<LentBuffers.Hold>> pipelineHolds = new ConcurrentHashMap<>();
  /** Whether the device host has ended: a recording answered after that holds nothing. */
  private volatile boolean ended;
  /**
   * Downloads up to this many bytes are copied out of the region on the link's reader, not lent over
   * it: a small download's Buffer holds no region memory however long the user keeps it. The pump's
   * chunks of exactly this size ({@code ChunkedTransfer.SPLIT_CHUNK}) are copied out too.
   */
  static final int COPIED_OUT = 256 << 10;
  /**
   * Bytes of an upload from outside the region copied into a slot on the thread that submits it, at
   * most: a chunk of the pump ({@code ChunkedTransfer.LOCAL_CHUNK}, on a copy thread) or a small
   * request (on the caller's thread); anything larger goes through the pump.
   */
  static final int COPIED_IN = 8 << 20;

  SharedTransfers(SharedRegion region, ProcessContextTier tier) {
    this.region = region;
    this.tier = tier;
  }

  void upload(Request r, UploadRequest u) {
    BufferHandle h = u.getHandle();
    Buffer data = u.getData();
    try {
      Transfers.checkUpload(h, data.length());
      if (data.length() > COPIED_IN && region.offsetOf(data) < 0) {
        throw new CudaException(FailureCode.BAD_REQUEST, "an upload of " + data.length() + " bytes from outside the "
          + "shared region must come through the chunk pump (at most " + COPIED_IN + " bytes in one request)");
      }
    } catch (CudaException refusal) {
      refuse(r, new BufferHandle(h.node(), h.device(), h.generation(), h.id(), h.dtype(), h.count(),
        h.tokenHigh(), h.tokenLow(), 0, 0), refusal);
      return;
    }
    long at = data.length() == 0 ? 0 : region.offsetOf(data);
    if (at >= 0) {
      tier.send(r, new SharedTransfer(h, at, data.length(), true), answer(r, () -> h, () -> { }));
      return;
    }
    long slot = slot(data.length());
    try {
      CopyThreads.copy(VertxInternals.byteBuf(data).nioBuffer(), region.slice(slot, data.length()));
    } catch (RuntimeException | Error e) {
      region.release(slot, data.length());
      throw e;
    }
    tier.send(r, new SharedTransfer(h, slot, data.length(), true),
      answer(r, () -> h, () -> region.release(slot, data.length())));
  }

  void download(Request r, BufferHandle h) {
    try {
      Transfers.checkView(h);
    } catch (CudaException refusal) {
      // A view outside its own count: the device host's handle checks refuse it before copying anything,
      // with the words they use in-process.
      refuse(r, h, refusal);
      return;
    }
    try {
      Transfers.checkDownload(h, Math.min(h.byteLength(), Transfers.MAX_DOWNLOAD));
      if (h.byteLength() > region.largestSlot()) {
        throw new CudaException(FailureCode.BAD_REQUEST, "a download of " + h.byteLength() + " bytes is larger than "
          + "the shared region lends at once (" + region.largestSlot() + "); it must come through the chunk pump");
      }
    } catch (CudaException refusal) {
      // The device host answers it as it answers in-process: its handle checks (on an empty view: the
      // whole one would be copied), then the same transfer rules.
      refuse(r, new BufferHandle(h.node(), h.device(), h.generation(), h.id(), h.dtype(), h.count(),
        h.tokenHigh(), h.tokenLow(), 0, 0), refusal);
      return;
    }
    int length = (int) h.byteLength();
    if (length <= COPIED_OUT) {
      // Small: copied out of the region at once, so no slot stays lent to a buffer the user keeps.
      long slot = slot(length);
      tier.send(r, new SharedTransfer(h, slot, length, false), answer(r, () -> {
        byte[] bytes = new byte[length];
        region.slice(slot, length).get(bytes);
        return new DownloadReply(h, Buffer.buffer(bytes));
      }, () -> region.release(slot, length)));
      return;
    }
    if (region.hold(length)) {
      long slot;
      try {
        slot = slot(length);
      } catch (CudaException e) {
        region.unhold(length);
        throw e;
      }
      // On success the slot goes with the buffer over it, and returns when that is released.
      tier.send(r, new SharedTransfer(h, slot, length, false), new ProcessContextTier.Call() {
        @Override
        public void replied(Object body) {
          if (answered(r)) {
            // Answered already (its deadline): nobody takes the buffer, so the slot goes back now.
            region.release(slot, length);
            region.unhold(length);
            return;
          }
          replyLent(r, h, region.buffer(slot, length, length));
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
    // Users already hold all they may: copied out of the slot, on a copy thread, into pooled memory.
    long slot = slot(length);
    tier.send(r, new SharedTransfer(h, slot, length, false), new ProcessContextTier.Call() {
      @Override
      public void replied(Object body) {
        if (answered(r)) {
          region.release(slot, length);
          return;
        }
        CopyThreads.execute(() -> {
          // The slot is free again before the answer leaves: what the requester sends next may need it.
          ByteBuffer out;
          try {
            out = HostBufferPool.shared().take(length);
            CopyThreads.copy(region.slice(slot, length), out);
          } catch (RuntimeException | Error e) {
            region.release(slot, length);
            r.fail(Failures.toCudaException("the download could not be copied out of the shared region", e));
            return;
          }
          region.release(slot, length);
          replyLent(r, h, HostBufferPool.shared().lease(out.flip(), length));
        });
      }

      @Override
      public void failed(CudaException failure) {
        region.release(slot, length);
        r.fail(failure);
      }
    });
  }

  /**
   * Records a pipeline whose steps name transfer buffers (memory of the region): each such step
   * crosses as the slice it names ({@link SharedTransfer}), and its buffer stays held (its slot lent,
   * a release of it deferred) until the pipeline's release is answered, which the device host does
   * once the pipeline's last use is done, or until the device host ends. A buffer that is not a
   * transfer buffer of this region as it was lent (not a slice), or that was released, fails the
   * recording with BAD_REQUEST naming its step.
   */
  void record(Request r, RecordRequest rr) {
    List<PipelineStep> steps = new ArrayList<>(rr.getSteps().size());
    List<LentBuffers.Hold> holds = new ArrayList<>();
    for (int i = 0; i < rr.getSteps().size(); i++) {
      PipelineStep s = rr.getSteps().get(i);
      Object body = s == null ? null : s.body();
      BufferHandle h = body instanceof UploadRequest u ? u.getHandle()
        : body instanceof DownloadIntoRequest d ? d.getHandle() : null;
      Buffer data = body instanceof UploadRequest u ? u.getData()
        : body instanceof DownloadIntoRequest d ? d.getData() : null;
      if (s == null || s.library() != null || h == null || data == null) {
        steps.add(s);
        continue;
      }
      long offset = data.length() == 0 ? -1 : region.offsetOf(data);
      LentBuffers.Hold hold = offset < 0 ? null : LentBuffers.hold(data);
      if (hold == null) {
        holds.forEach(LentBuffers.Hold::close);
        r.fail(new CudaException(FailureCode.BAD_REQUEST, "steps[" + i + "] (" + body.getClass().getSimpleName()
          + ") cannot be recorded: " + Transfers.NOT_A_TRANSFER_BUFFER));
        return;
      }
      holds.add(hold);
      steps.add(new PipelineStep(null, new SharedTransfer(h, offset, data.length(), body instanceof UploadRequest)));
    }
    tier.send(r, new RecordRequest(steps), new ProcessContextTier.Call() {
      @Override
      public void replied(Object body) {
        // Recorded (whether or not its requester still waits): held until the pipeline goes.
        if (body instanceof PipelineHandle p && !holds.isEmpty()) {
          pipelineHolds.put(p.id(), holds);
          if (ended) {
            releaseHeld();
          }
        } else {
          holds.forEach(LentBuffers.Hold::close);
        }
        r.reply(body);
      }

      @Override
      public void failed(CudaException failure) {
        holds.forEach(LentBuffers.Hold::close);
        r.fail(failure);
      }
    });
  }

  /** The pipeline {@code id} was released in the device host, its uses done: what it held goes back. */
  void released(long id) {
    List<LentBuffers.Hold> holds = pipelineHolds.remove(id);
    if (holds != null) {
      holds.forEach(LentBuffers.Hold::close);
    }
  }

  /** The device host ended: no pipeline of it uses the region any more, and what they held goes back. */
  void releaseHeld() {
    ended = true;
    for (Long id : List.copyOf(pipelineHolds.keySet())) {
      released(id);
    }
  }

  /**
   * Replies to {@code r} with {@code lent}, a buffer lent to the requester. A request answered
   * meanwhile (its deadline, a loss) takes nothing, and the buffer goes back at once rather than when
   * a collection finds it.
   */
  private static void replyLent(Request r, BufferHandle h, Buffer lent) {
    DownloadReply reply = new DownloadReply(h, lent);
    if (r instanceof InFlight.Entry) {
      if (!((InFlight.Entry) r).tryReply(reply)) {
        LentBuffers.release(lent);
      }
    } else {
      r.reply(reply);
    }
  }

  /**
   * Fails {@code r}, a transfer refused here by the handle's own claims, with {@code refusal} — after
   * the device host has validated the handle ({@code AllocationTable}, by a download of {@code probe}:
   * the handle itself, or for an upload a view of none of its elements), so a caller without the
   * buffer's token gets FORBIDDEN, as in-process, and learns nothing from the shape it claimed. Only a
   * handle that passes gets {@code refusal}; one the device host refuses gets the host's failure.
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

  private ProcessContextTier.Call answer(Request r, Supplier<Object> reply, Runnable cleanup) {
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

  // A request already answered (by its deadline, a loss) while its frame was on the link.
  private static boolean answered(Request r) {
    return r instanceof InFlight.Entry && ((InFlight.Entry) r).answered();
  }

  private long slot(long bytes) {
    long slot = region.allocate(bytes);
    if (slot < 0) {
      throw new CudaException(FailureCode.QUEUE_FULL, "the shared region has no free " + bytes
        + "-byte slot now; retry when transfers in flight have finished");
    }
    return slot;
  }

  /** What users are lent of the region ({@link #memory}). */
  TransferMemory memory() {
    return memory;
  }

  /**
   * Transfer buffers in slots of the region (an upload from one crosses without a copy), at most
   * {@link SharedRegion#heldLimit} held with downloads lent over it; landings come from the host
   * buffer pool, and what is held counts the region's and the pool's.
   */
  private final TransferMemory memory = new HostTransferMemory() {
    @Override
    public Buffer allocate(int bytes) {
      if (!region.hold(bytes)) {
        throw new CudaException(FailureCode.OUT_OF_MEMORY, "transfer buffers and downloads lent over the shared "
          + "region may hold at most " + region.heldLimit() + " bytes (three quarters of sharedMemorySize) together; "
          + region.held() + " are held, " + bytes + " more asked for: release some (releaseTransferBuffer)");
      }
      long offset = region.allocate(bytes);
      if (offset < 0) {
        region.unhold(bytes);
        throw new CudaException(FailureCode.OUT_OF_MEMORY, "the shared region has no free " + bytes + "-byte slot");
      }
      return region.buffer(offset, bytes, 0);
    }

    /** Whether {@code buffer} lies in the region. */
    @Override
    public boolean lends(Buffer buffer) {
      return buffer.length() > 0 && region.offsetOf(buffer) >= 0;
    }

    @Override
    public long limit() {
      return region.heldLimit();
    }

    @Override
    public long held() {
      return region.held() + super.held();
    }
  };
}
