package com.vertxcuda.library.impl;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.device.spi.DeviceBuffer;
import com.vertxcuda.device.spi.DeviceMemory;

import java.util.ArrayList;
import java.util.List;

/**
 * A validated buffer argument of a library call: the buffer it lives in, the handle (or view)
 * that named it, and how many elements from the view's start the call touches.
 */
public final class Operand {

  private final DeviceBuffer buffer;
  private final BufferHandle handle;
  private final long extent;

  public Operand(DeviceBuffer buffer, BufferHandle handle, long extent) {
    this.buffer = buffer;
    this.handle = handle;
    this.extent = extent;
  }

  public DeviceBuffer buffer() { return buffer; }
  public BufferHandle handle() { return handle; }
  public DeviceMemory memory() { return buffer.memory(); }
  public DType dtype() { return handle.dtype(); }
  /** Byte offset of the view's first element in its buffer. */
  public long byteOffset() { return handle.byteOffset(); }
  /** Elements touched, counted from the view's first element. */
  public long extent() { return extent; }
  public long byteExtent() { return handle.dtype().bytes(extent); }

  /** Whether the two operands touch a common element of one buffer. */
  public boolean overlaps(Operand o) {
    return buffer == o.buffer && extent > 0 && o.extent > 0
      && handle.offset() < o.handle.offset() + o.extent && o.handle.offset() < handle.offset() + extent;
  }

  /** The buffers {@code operands} live in, in order. */
  public static List<DeviceBuffer> buffers(List<Operand> operands) {
    List<DeviceBuffer> all = new ArrayList<>(operands.size());
    operands.forEach(o -> all.add(o.buffer));
    return all;
  }
}
