package com.vertxcuda.device.context;

import com.vertxcuda.CudaException;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.DeviceMemory;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.Preparation;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.internal.ReclaimRequest;
import com.vertxcuda.message.AllocRequest;
import com.vertxcuda.message.FreeRequest;
import com.vertxcuda.message.KeepRequest;

import java.util.List;

/**
 * The device's memory operations on the submission thread: alloc, free, keep (hand a buffer to the
 * device) and reclaim (free what a departed node held). Memory returns once its queued uses are done.
 */
final class MemoryOperations {

  private static final System.Logger LOG = System.getLogger(MemoryOperations.class.getName());

  private final ContextRuntime runtime;
  private final DeviceContext device;
  /** The context's copy stream: new buffers are zeroed there. */
  private final GpuStream stream;

  MemoryOperations(ContextRuntime runtime, GpuStream stream) {
    this.runtime = runtime;
    this.device = runtime.device();
    this.stream = stream;
  }

  /**
   * Small allocations are served here; a large one ({@value #PREPARED_BYTES} bytes or more: a fresh
   * device allocation, or fresh host memory on the host backend, can take milliseconds) is made
   * off the submission thread. It touches no buffer, so nothing waits for it.
   */
  Preparation alloc(Request r, AllocRequest a, Object prepared) throws BackendException {
    AllocationTable table = runtime.allocations();
    long bytes = table.checkAllocation(a.getDtype(), a.getCount());
    String owner = r.owner();
    DeviceMemory memory;
    if (prepared == null) {
      table.reserve(bytes, owner);
      if (bytes >= PREPARED_BYTES) {
        return () -> new PreparedMemory(table, allocate(table, bytes, owner), bytes, owner);
      }
      memory = allocate(table, bytes, owner);
    } else {
      memory = ((PreparedMemory) prepared).memory;
    }
    Allocation allocation = table.register(a.getDtype(), a.getCount(), owner, memory);
    if (a.isUninitialized() || allocation.bytes() == 0) {
      r.reply(allocation.handle());
    } else {
      zero(r, allocation);
    }
    return null;
  }

  /**
   * A new buffer reads as zeros until written, as an OS's fresh pages do: memory comes from a cache
   * of blocks other owners freed (and a fresh device allocation is not cleared either). The memset
   * is queued on the copy stream and recorded as the buffer's last write, so every later use, on
   * any stream, is ordered after it. The buffer is handed out once the memset has completed: one
   * whose zeroing failed is answered with the failure and goes back, never given out unzeroed.
   */
  private void zero(Request r, Allocation a) throws BackendException {
    long bytes = a.bytes();
    int unit = bytes % Integer.BYTES == 0 ? Integer.BYTES : 1;
    GpuEvent done;
    try {
      done = runtime.ordering().run(stream, List.of(), List.of(a),
        () -> device.fill(stream, a.memory(), 0, bytes / unit, unit, 0L));
    } catch (BackendException | RuntimeException e) {
      release(runtime.allocations().remove(a.handle()));
      throw e;
    }
    runtime.whenDone(done, err -> {
      if (err == null) {
        r.reply(a.handle());
        return;
      }
      r.fail(runtime.failure(err));
      runtime.loop().execute(() -> {
        try {
          release(runtime.allocations().remove(a.handle()));
        } catch (CudaException gone) {
          // freed meanwhile
        }
      });
    });
  }

  /**
   * A large allocation made off the submission thread. If its request is answered before it is taken
   * (a timeout, the context closing), the submission loop closes it: the memory and its reservation
   * go back.
   */
  private final class PreparedMemory implements AutoCloseable {
    final AllocationTable table;
    final DeviceMemory memory;
    final long bytes;
    final String owner;

    PreparedMemory(AllocationTable table, DeviceMemory memory, long bytes, String owner) {
      this.table = table;
      this.memory = memory;
      this.bytes = bytes;
      this.owner = owner;
    }

    @Override
    public void close() throws BackendException {
      try {
        if (!runtime.isPoisoned()) {
          device.release(memory);
        }
      } finally {
        table.unreserve(bytes, owner);
      }
    }
  }

  /** Sizes from which allocations of device and host memory are prepared off the submission thread. */
  static final long PREPARED_BYTES = 1 << 20;

  private DeviceMemory allocate(AllocationTable table, long bytes, String owner) throws BackendException {
    try {
      return device.allocate(bytes);
    } catch (BackendException | RuntimeException | Error e) {
      // An Error too: the host backend lets the JVM's OutOfMemoryError through for Failures to map.
      table.unreserve(bytes, owner);
      throw e;
    }
  }

  void free(Request r, FreeRequest f) {
    Allocation a = runtime.allocations().remove(f.getHandle());
    release(a);
    r.reply(a.handle());
  }

  void keep(Request r, KeepRequest k) {
    AllocationTable table = runtime.allocations();
    Allocation a = table.resolve(k.getHandle(), "handle");
    table.disown(a);
    r.reply(a.handle());
  }

  /** Frees what a departed node held: its buffers (each once its uses are done), then its library objects. */
  void reclaim(Request r, ReclaimRequest rr) {
    AllocationTable table = runtime.allocations();
    long freed = 0;
    for (Allocation a : table.ownedBy(rr.owner())) {
      try {
        release(table.remove(a.handle()));
        freed++;
      } catch (CudaException gone) {
        // freed meanwhile
      }
    }
    runtime.ownerGone(rr.owner());
    if (freed > 0) {
      LOG.log(System.Logger.Level.INFO, "reclaimed " + freed + " buffers of departed node " + rr.owner());
    }
    r.reply(null);
  }

  // Memory returns after every recorded use of {@code a} has completed, on the submission thread.
  private void release(Allocation a) {
    AllocationTable table = runtime.allocations();
    List<GpuEvent> uses = runtime.ordering().pendingUses(a);
    runtime.ordering().forget(a);
    // Memory returns only after every recorded use has completed, on the submission thread.
    runtime.afterUses(uses, () -> {
      if (!runtime.isPoisoned()) {
        try {
          device.release(a.memory());
        } catch (BackendException e) {
          LOG.log(System.Logger.Level.WARNING, "release failed: " + e.getMessage());
        }
      }
      table.unreserve(a.bytes(), null); // its owner's share went when it was removed
    });
  }
}
