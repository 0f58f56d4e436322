package com.vertxcuda.device.impl;

import com.vertxcuda.device.memory.LentBuffers;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import io.vertx.core.buffer.Buffer;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The one place that decides how many bytes of host memory a device may lend to its users at once:
 * downloads (a buffer over pinned, pooled or shared-region memory), the landings of downloads the
 * pump brings in, and transfer buffers. Each is charged before the memory is made and stays charged
 * until the memory returns (released, or collected once unreachable); past the device's budget, or
 * past one owner's quota where one is set, a charge is refused with QUEUE_FULL. Thread-safe.
 */
public final class TransferBudget {

  private final long limit;
  private final long ownerQuota;
  private long held;
  /** Bytes charged per owner, only where a quota is set; an owner holding nothing is not kept. */
  private final Map<String, Long> owners = new HashMap<>();

  /** A budget of {@code limit} bytes for the device, {@code ownerQuota} for each owner (0: none). */
  public TransferBudget(long limit, long ownerQuota) {
    if (limit <= 0) {
      throw new IllegalArgumentException("transferBudget must be positive: " + limit);
    }
    if (ownerQuota < 0) {
      throw new IllegalArgumentException("ownerTransferQuota must be 0 (none) or positive: " + ownerQuota);
    }
    this.limit = limit;
    this.ownerQuota = ownerQuota;
  }

  /** The most one charge may be: the budget, or the owner's quota where that is smaller. */
  public long largest() {
    return ownerQuota > 0 ? Math.min(limit, ownerQuota) : limit;
  }

  /** Bytes charged now. */
  public synchronized long held() {
    return held;
  }

  /**
   * Charges {@code bytes} to {@code owner} (the node a request came from; this node for what local
   * callers take); throws QUEUE_FULL, naming the bound, where the device's budget or the owner's
   * quota has no room for them now.
   */
  public Charge take(String owner, long bytes) {
    synchronized (this) {
      long mine = ownerQuota > 0 ? owners.getOrDefault(owner, 0L) : 0;
      if (held + bytes > limit) {
        throw refusal(bytes, "the device's transfer budget (transferBudget " + limit + " bytes) has " + (limit - held));
      }
      if (ownerQuota > 0 && mine + bytes > ownerQuota) {
        throw refusal(bytes, "the quota of node " + owner + " (ownerTransferQuota " + ownerQuota + " bytes) has "
          + (ownerQuota - mine));
      }
      held += bytes;
      if (ownerQuota > 0) {
        owners.put(owner, mine + bytes);
      }
    }
    return new Charge(owner, bytes);
  }

  private CudaException refusal(long bytes, String room) {
    String why = bytes > largest() ? "; it never fits: transfer it in views of at most " + largest() + " bytes"
      : "; retry when downloads and transfer buffers held now are released";
    return new CudaException(FailureCode.QUEUE_FULL, "host memory lent to users for " + bytes + " more bytes: " + room
      + " bytes free" + why);
  }

  private synchronized void give(String owner, long bytes) {
    held -= bytes;
    if (ownerQuota > 0) {
      long left = owners.getOrDefault(owner, 0L) - bytes;
      if (left > 0) {
        owners.put(owner, left);
      } else {
        owners.remove(owner);
      }
    }
  }

  /** Bytes charged to one owner, given back once. */
  public final class Charge {
    private final String owner;
    private final long bytes;
    private final AtomicBoolean given = new AtomicBoolean();

    private Charge(String owner, long bytes) {
      this.owner = owner;
      this.bytes = bytes;
    }

    /** Gives the bytes back now (what they were for was never made, or has returned); once. Any thread. */
    public void give() {
      if (given.compareAndSet(false, true)) {
        TransferBudget.this.give(owner, bytes);
      }
    }

    /**
     * Keeps the bytes charged until {@code lent} returns to whichever pool, region or pinned block
     * lent it; given back now where it is memory of none (a copy on the heap) or has returned already.
     */
    public void until(Buffer lent) {
      if (lent == null || !LentBuffers.whenReturned(lent, this::give)) {
        give();
      }
    }

    /**
     * Makes the memory this charge pays for and keeps the bytes charged until it returns
     * ({@link #until}); gives them back at once if making it fails.
     */
    public Buffer lend(Supplier<Buffer> make) {
      Buffer b;
      try {
        b = make.get();
      } catch (RuntimeException | Error e) {
        give();
        throw e;
      }
      until(b);
      return b;
    }
  }
}
