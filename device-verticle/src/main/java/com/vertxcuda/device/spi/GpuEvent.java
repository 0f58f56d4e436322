package com.vertxcuda.device.spi;

/**
 * A point in a stream's work. Reference counted: whoever keeps an event beyond the call that made it
 * retains it and releases it when done, so the backend can recycle it (cudarc's ownership rule).
 * A new event starts with one reference, owned by its recorder.
 */
public interface GpuEvent {

  /** The stream the event was recorded on. */
  GpuStream stream();

  /** Whether the work before the event has finished (thread-safe). */
  boolean isComplete();

  GpuEvent retain();

  void release();
}
