package com.vertxcuda.device.cuda;

import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import jcuda.driver.CUevent;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One recording of a pooled CUDA event (timing disabled, unless recorded to be timed). The handle goes back to the pool when
 * the last reference is released; a wrapper is never re-recorded.
 */
final class CudaEvent implements GpuEvent {

  final CUevent handle;
  private final CudaContext owner;
  private final CudaStream stream;
  private final AtomicInteger refs = new AtomicInteger(1);
  private volatile boolean complete;
  /** Created with timing on ({@link CudaContext#recordTimed}): it goes back to that pool. */
  final boolean timed;

  CudaEvent(CudaContext owner, CUevent handle, CudaStream stream) {
    this(owner, handle, stream, false);
  }

  CudaEvent(CudaContext owner, CUevent handle, CudaStream stream, boolean timed) {
    this.owner = owner;
    this.handle = handle;
    this.stream = stream;
    this.timed = timed;
  }

  @Override
  public GpuStream stream() {
    return stream;
  }

  @Override
  public boolean isComplete() {
    if (complete || CudaErrors.poisonedBy() != null) {
      return true;
    }
    int r = JCudaDriver.cuEventQuery(handle);
    if (r == CUresult.CUDA_ERROR_NOT_READY) {
      return false;
    }
    if (r != CUresult.CUDA_SUCCESS) {
      // Recorded (a sticky one poisons the process); the next call on the context reports it.
      CudaErrors.failure(r, "cuEventQuery");
    }
    complete = true;
    return true;
  }

  void markComplete() {
    complete = true;
  }

  @Override
  public GpuEvent retain() {
    if (refs.getAndIncrement() <= 0) {
      throw new IllegalStateException("event retained after its last release");
    }
    return this;
  }

  @Override
  public void release() {
    int left = refs.decrementAndGet();
    if (left == 0) {
      owner.recycle(handle, timed);
    } else if (left < 0) {
      throw new IllegalStateException("event released more often than retained");
    }
  }
}
