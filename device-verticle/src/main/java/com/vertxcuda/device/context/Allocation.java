package com.vertxcuda.device.context;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.device.spi.DeviceBuffer;
import com.vertxcuda.device.spi.DeviceMemory;
import com.vertxcuda.device.spi.GpuEvent;

import java.util.ArrayList;
import java.util.List;

/**
 * One live buffer of a context: its memory, the handle that names it, its owner, and the events
 * that order its uses across streams (touched only on the submission thread, see {@link StreamOrdering}).
 */
public final class Allocation implements DeviceBuffer {

  private final BufferHandle handle;
  private final DeviceMemory memory;
  /** Null once the device holds it ({@code keep}); written under the table's lock. */
  private volatile String owner;
  /** Set once it has left its table (freed, or the context closed): a cached lookup must not find it. */
  volatile boolean removed;
  GpuEvent lastWrite;
  /** The call of {@link StreamOrdering} that last met this buffer, and whether that call writes it. */
  int seen;
  boolean written;
  final List<GpuEvent> readsSinceWrite = new ArrayList<>();

  Allocation(BufferHandle handle, DeviceMemory memory, String owner) {
    this.handle = handle;
    this.memory = memory;
    this.owner = owner;
  }

  @Override
  public BufferHandle handle() {
    return handle;
  }

  @Override
  public DeviceMemory memory() {
    return memory;
  }

  /** The node that allocated it, or null when the device holds it. */
  public String owner() {
    return owner;
  }

  void disown() {
    owner = null;
  }

  @Override
  public long bytes() {
    return handle.dtype().bytes(handle.count());
  }
}
