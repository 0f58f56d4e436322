package com.vertxcuda.library.impl;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.device.context.Allocation;
import com.vertxcuda.device.spi.DeviceMemory;

/**
 * A validated buffer argument of a library call: the allocation it lives in, the handle (or view)
 * that named it, and how many elements from the view's start the call touches.
 */
public final class Operand {

  private final Allocation allocation;
  private final BufferHandle handle;
  private final long extent;

  public Operand(Allocation allocation, BufferHandle handle, long extent) {
    this.allocation = allocation;
    this.handle = handle;
    this.extent = extent;
  }

  public Allocation allocation() { return allocation; }
  public BufferHandle handle() { return handle; }
  public DeviceMemory memory() { return allocation.memory(); }
  public DType dtype() { return handle.dtype(); }
  /** Byte offset of the view's first element in its buffer. */
  public long byteOffset() { return handle.byteOffset(); }
  /** Elements touched, counted from the view's first element. */
  public long extent() { return extent; }
  public long byteExtent() { return handle.dtype().bytes(extent); }

  /** Whether the two operands touch a common element of one buffer. */
  public boolean overlaps(Operand o) {
    return allocation == o.allocation && extent > 0 && o.extent > 0
      && handle.offset() < o.handle.offset() + o.extent && o.handle.offset() < handle.offset() + extent;
  }
}
