package com.vertxcuda.device.context;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.spi.DeviceMemory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The live buffers of one context, and the one place where handles are validated. Thread-safe: the
 * context and every library verticle resolve handles through it.
 */
public final class AllocationTable {

  private final String node;
  private final int device;
  private final long generation;
  private final long memoryLimit;
  private final long ownerQuota;
  /** Bytes each owner holds in buffers and allocations under way; guarded by this. */
  private final Map<String, Long> ownerBytes = new HashMap<>();
  private final Map<Long, Allocation> live = new ConcurrentHashMap<>();
  /**
   * Allocations resolved lately, by id modulo the size: a batch names the same inputs hundreds of
   * times between its outputs. An entry is used only for its own id and while it is live (footprints
   * resolve on callers' threads, so an entry may be put back by a resolve that raced a free: the
   * freed allocation's mark, set before its free returns, turns it away).
   */
  private final Allocation[] recent = new Allocation[RECENT];
  private static final int RECENT = 64;
  private final AtomicLong nextId = new AtomicLong(1);
  private long reservedBytes;
  private long liveBytes;
  /** Bytes each library holds outside buffers (plans, work areas, modules), included in reservedBytes. */
  private final Map<String, Long> libraryBytes = new TreeMap<>();

  public AllocationTable(String node, int device, long generation, long memoryLimit, long ownerQuota) {
    this.node = node;
    this.device = device;
    this.generation = generation;
    this.memoryLimit = memoryLimit;
    this.ownerQuota = ownerQuota;
  }

  public long generation() {
    return generation;
  }

  /** Checks an allocation request's fields and returns its size in bytes. */
  public long checkAllocation(DType dtype, long count) {
    if (dtype == null) {
      throw bad("dtype is missing");
    }
    if (count <= 0) {
      throw bad("count must be > 0, got " + count);
    }
    try {
      return dtype.bytes(count);
    } catch (ArithmeticException e) {
      throw bad("count " + count + " of " + dtype + " overflows");
    }
  }

  /**
   * Reserves {@code bytes} for {@code owner} (null: the device) against the memory limit and the
   * owner's quota; OUT_OF_MEMORY past either, naming it.
   */
  public synchronized void reserve(long bytes, String owner) {
    if (memoryLimit > 0 && reservedBytes + bytes > memoryLimit) {
      throw new CudaException(FailureCode.OUT_OF_MEMORY, bytes + " bytes do not fit: "
        + reservedBytes + " of the " + memoryLimit + "-byte memory limit are in use");
    }
    if (owner != null && ownerQuota > 0) {
      long held = ownerBytes.getOrDefault(owner, 0L);
      if (held + bytes > ownerQuota) {
        throw new CudaException(FailureCode.OUT_OF_MEMORY, bytes + " bytes do not fit node " + owner
          + "'s quota: it holds " + held + " of its " + ownerQuota + "-byte quota (DeviceOptions.ownerMemoryQuota)");
      }
    }
    reservedBytes += bytes;
    if (owner != null) {
      ownerBytes.merge(owner, bytes, Long::sum);
    }
  }

  /** Returns a reservation of {@code owner}'s once its memory is back. */
  public synchronized void unreserve(long bytes, String owner) {
    reservedBytes -= bytes;
    if (owner != null) {
      ownerBytes.computeIfPresent(owner, (o, held) -> held == bytes ? null : held - bytes);
    }
  }

  /** Bytes each owner holds (buffers and allocations under way), by node id. */
  public synchronized Map<String, Long> ownerBytes() {
    return new HashMap<>(ownerBytes);
  }

  /** Hands {@code a} to the device: it stops counting against its owner's quota. */
  public synchronized void disown(Allocation a) {
    if (live.get(a.handle().id()) == a) {
      dropOwner(a);
    }
    a.disown();
  }

  private void dropOwner(Allocation a) {
    String owner = a.owner();
    if (owner != null) {
      long bytes = a.bytes();
      ownerBytes.computeIfPresent(owner, (o, held) -> held == bytes ? null : held - bytes);
    }
  }

  /** The live buffers {@code owner} holds. */
  public List<Allocation> ownedBy(String owner) {
    List<Allocation> owned = new ArrayList<>();
    for (Allocation a : live.values()) {
      if (owner.equals(a.owner())) {
        owned.add(a);
      }
    }
    return owned;
  }

  /**
   * Reserves {@code bytes} that {@code library} holds outside any buffer against the memory limit,
   * as {@link #reserve} does for buffers; OUT_OF_MEMORY past it, naming the limit.
   */
  public synchronized void reserveLibrary(String library, long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("bytes " + bytes);
    }
    if (memoryLimit > 0 && reservedBytes + bytes > memoryLimit) {
      throw new CudaException(FailureCode.OUT_OF_MEMORY, "the " + library + " library needs " + bytes
        + " bytes, which do not fit: " + reservedBytes + " of the " + memoryLimit
        + "-byte memory limit (DeviceOptions.memoryLimit) are in use");
    }
    reservedBytes += bytes;
    libraryBytes.merge(library, bytes, Long::sum);
  }

  /** Returns what {@link #reserveLibrary} reserved once the library has released it. */
  public synchronized void unreserveLibrary(String library, long bytes) {
    reservedBytes -= bytes;
    libraryBytes.merge(library, -bytes, Long::sum);
  }

  /** What each library holds outside buffers, in bytes, by library. */
  public synchronized Map<String, Long> libraryBytes() {
    return new HashMap<>(libraryBytes);
  }

  /** Records a new buffer and issues its handle. */
  public Allocation register(DType dtype, long count, String owner, DeviceMemory memory) {
    BufferHandle handle = BufferHandle.issue(node, device, generation, nextId.getAndIncrement(), dtype, count);
    Allocation a = new Allocation(handle, memory, owner);
    live.put(handle.id(), a);
    synchronized (this) {
      liveBytes += a.bytes();
    }
    return a;
  }

  /**
   * Validates a handle and returns its allocation. Each problem gets its own code: missing or
   * foreign handle or bad range BAD_REQUEST, older generation STALE_HANDLE, unknown or freed id
   * NOT_FOUND, wrong token FORBIDDEN.
   */
  public Allocation resolve(BufferHandle h, String field) {
    if (h == null) {
      throw bad(field + " is missing");
    }
    if (!node.equals(h.node()) || device != h.device()) {
      throw bad(field + " belongs to device " + h.node() + "/" + h.device() + ", not " + node + "/" + device);
    }
    if (h.generation() != generation) {
      throw new CudaException(FailureCode.STALE_HANDLE, field + " was issued by generation "
        + h.generation() + "; the device is at generation " + generation);
    }
    int slot = (int) (h.id() & (RECENT - 1));
    Allocation a = recent[slot];
    if (a == null || a.handle().id() != h.id() || a.removed) {
      a = live.get(h.id());
      recent[slot] = a;
    }
    if (a == null) {
      throw new CudaException(FailureCode.NOT_FOUND, field + " names buffer #" + h.id()
        + ", which does not exist or was freed");
    }
    BufferHandle whole = a.handle();
    if (whole.tokenHigh() != h.tokenHigh() || whole.tokenLow() != h.tokenLow()) {
      throw new CudaException(FailureCode.FORBIDDEN, field + " does not carry buffer #" + h.id() + "'s token");
    }
    if (whole.dtype() != h.dtype()) {
      throw bad(field + " says dtype " + h.dtype() + " but buffer #" + h.id() + " holds " + whole.dtype());
    }
    if (whole.count() != h.count()) {
      throw bad(field + " says " + h.count() + " elements but buffer #" + h.id() + " has " + whole.count());
    }
    if (h.offset() < 0 || h.length() < 0 || h.offset() > whole.count() || h.length() > whole.count() - h.offset()) {
      throw bad(field + " range [" + h.offset() + ", +" + h.length() + ") is outside buffer #" + h.id()
        + " of " + whole.count() + " elements");
    }
    return a;
  }

  /** Validates a handle of one of {@code dtypes}. */
  public Allocation resolve(BufferHandle h, String field, DType... dtypes) {
    Allocation a = resolve(h, field);
    for (DType t : dtypes) {
      if (t == h.dtype()) {
        return a;
      }
    }
    throw bad(field + " has dtype " + h.dtype() + "; expected one of " + Arrays.toString(dtypes));
  }

  /** Validates and removes a whole buffer (for free). Later uses of its handles get NOT_FOUND. */
  public Allocation remove(BufferHandle h) {
    Allocation a = resolve(h, "handle");
    if (h.isView()) {
      throw bad("free takes the whole buffer, not a view");
    }
    if (live.remove(h.id(), a)) {
      a.removed = true;
      recent[(int) (h.id() & (RECENT - 1))] = null;
      synchronized (this) {
        liveBytes -= a.bytes();
        // It stops counting against its owner now, like its bytes; its reservation goes with its memory.
        dropOwner(a);
      }
      return a;
    }
    throw new CudaException(FailureCode.NOT_FOUND, "buffer #" + h.id() + " was freed");
  }

  /** Removes every buffer (when the context closes). */
  public List<Allocation> drain() {
    List<Allocation> all = new ArrayList<>(live.values());
    all.forEach(a -> a.removed = true);
    Arrays.fill(recent, null);
    live.clear();
    synchronized (this) {
      liveBytes = 0;
      ownerBytes.clear();
    }
    return all;
  }

  public synchronized long liveBytes() {
    return liveBytes;
  }

  public long liveBuffers() {
    return live.size();
  }

  private static CudaException bad(String message) {
    return new CudaException(FailureCode.BAD_REQUEST, message);
  }
}
