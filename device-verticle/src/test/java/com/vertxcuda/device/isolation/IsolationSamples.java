package com.vertxcuda.device.isolation;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.device.context.SharedTransfer;

import java.util.List;

/** Samples of the link's own wire types (for the wire fuzz of the modules above). */
public final class IsolationSamples {

  private IsolationSamples() {
  }

  public static List<Object> all() {
    BufferHandle h = BufferHandle.issue("node-1", 0, 3, 5, DType.F64, 1 << 20);
    return List.of(new SharedTransfer(h, 4096, 1 << 16, true),
      new SharedTransfer(h.view(8, 1024), 0, 4096, false));
  }
}
