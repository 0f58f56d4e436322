package com.vertxcuda.device.spi;

import com.vertxcuda.FailureCode;
import com.vertxcuda.device.memory.HostBufferPool;
import com.vertxcuda.device.memory.LentBuffers;
import io.vertx.core.buffer.Buffer;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * One device context. Methods run on the thread that opened the context or on a thread bound with
 * {@link #bindCurrentThread()}; completion futures complete on a backend thread.
 *
 * <p>Any method can throw a {@link BackendException}; a sticky one (or a completion failing with
 * one) poisons the context, which the caller must then never touch again.
 */
public interface DeviceContext {

  /** Device name, e.g. "NVIDIA A100 80GB PCIe" or "host". */
  String deviceName();

  /** Compute capability such as "9.0"; empty where it does not apply. */
  String computeCapability();

  /** The device's PCI bus id ("0000:3B:00.0"), by which NVML finds the same GPU; empty where there is none. */
  default String pciBusId() {
    return "";
  }

  /** Free and total device memory in bytes, as the backend sees them. */
  long[] memoryInfo() throws BackendException;

  /** Makes this context current on the calling thread (each library verticle calls it once). */
  void bindCurrentThread() throws BackendException;

  /** Device memory of at least {@code bytes}; OUT_OF_MEMORY when it cannot be had. */
  DeviceMemory allocate(long bytes) throws BackendException;

  /** Returns memory; the caller guarantees every use of it has completed. */
  void release(DeviceMemory memory) throws BackendException;

  /** Bytes held for reuse by a caching allocator (0 without one). */
  long cachedBytes();

  /** A new stream for the calling thread's work. */
  GpuStream createStream(String name) throws BackendException;

  /** Records an event after the work queued on {@code stream} so far. */
  GpuEvent record(GpuStream stream) throws BackendException;

  /**
   * {@link #record}, for an event whose time is read afterwards ({@link #elapsedNanos},
   * {@link #reachedNanos}): what the submission loop records around a request's work while phases
   * are measured. Backends without timed events record a plain one.
   */
  default GpuEvent recordTimed(GpuStream stream) throws BackendException {
    return record(stream);
  }

  /**
   * The device time between two complete events of {@link #recordTimed} on one stream, in ns; -1 where
   * the backend cannot tell. On the completion path: it must not block.
   */
  default long elapsedNanos(GpuEvent from, GpuEvent to) {
    return -1;
  }

  /**
   * When a complete event of {@link #recordTimed} was reached, on this JVM's {@link System#nanoTime}
   * clock; -1 where the backend cannot tell (a GPU's clock is not the host's).
   */
  default long reachedNanos(GpuEvent event) {
    return -1;
  }

  /** Makes later work on {@code stream} wait for {@code event}. */
  void await(GpuStream stream, GpuEvent event) throws BackendException;

  /**
   * Completes when {@code event} is reached; fails with a sticky {@link BackendException} if the
   * context was poisoned meanwhile. Never blocks the caller. The future holds its own reference.
   */
  CompletableFuture<Void> whenComplete(GpuEvent event);

  /**
   * A full host Buffer of {@code bytes} that device-to-host copies reach fastest: pinned memory on
   * cuda, the JVM's host buffer pool otherwise. Downloads land in one.
   */
  default Buffer hostBuffer(int bytes) throws BackendException {
    HostBufferPool pool = HostBufferPool.shared();
    return pool.lease(pool.take(bytes), bytes);
  }

  /**
   * Like {@link #hostBuffer}, but only from memory already at hand (a pool's idle blocks), so it
   * never waits for fresh memory: null when there is none.
   */
  default Buffer idleHostBuffer(int bytes) {
    HostBufferPool pool = HostBufferPool.shared();
    ByteBuffer memory = pool.takeIdle(bytes);
    return memory == null ? null : pool.lease(memory, bytes);
  }

  /** Returns a buffer from {@link #hostBuffer} at once; false if it is not one. */
  default boolean releaseHostBuffer(Buffer buffer) {
    return LentBuffers.release(buffer);
  }

  /**
   * Holds {@code host}, a buffer lent in this JVM, for copies that outlive one request (a recorded
   * pipeline's, {@link LentBuffers#hold}); null where this context does not copy it as it lies, or
   * it is not lent, or it was released. Any lent memory on a backend that reads host memory where
   * it lies; on cuda only page-locked memory, which a captured graph may copy from and into.
   */
  default LentBuffers.Hold holdHostMemory(Buffer host) {
    return LentBuffers.hold(host);
  }

  /** Queues a copy of {@code src}'s remaining bytes into {@code dst} at {@code dstOffset}. */
  void copyHostToDevice(GpuStream stream, ByteBuffer src, DeviceMemory dst, long dstOffset) throws BackendException;

  /** Queues a copy into {@code dst}'s remaining bytes from {@code src} at {@code srcOffset}. */
  void copyDeviceToHost(GpuStream stream, DeviceMemory src, long srcOffset, ByteBuffer dst) throws BackendException;

  void copyDeviceToDevice(GpuStream stream, DeviceMemory src, long srcOffset, DeviceMemory dst, long dstOffset,
                          long bytes) throws BackendException;

  /**
   * Whether {@link #copyToPeer} can copy from this context into {@code peer}'s memory (another
   * context of this process, of the same backend). On this context's thread: a cuda context enables
   * peer access here where the devices allow it.
   */
  default boolean canCopyToPeer(DeviceContext peer) {
    return false;
  }

  /**
   * Queues on {@code stream} (this context's) a copy of {@code bytes} from {@code src} into
   * {@code dst}, memory of {@code peer}: directly between the devices where they allow it, staged by
   * the driver otherwise. The caller orders it on both contexts.
   */
  default void copyToPeer(GpuStream stream, DeviceMemory src, long srcOffset, DeviceContext peer, DeviceMemory dst,
                          long dstOffset, long bytes) throws BackendException {
    throw BackendException.of(FailureCode.UNSUPPORTED, "no copies between devices on this backend");
  }

  /** Queues a fill of {@code count} elements of {@code elementSize} bytes with the bit pattern {@code bits}. */
  void fill(GpuStream stream, DeviceMemory dst, long byteOffset, long count, int elementSize, long bits)
    throws BackendException;

  /** Releases everything; after a sticky error this must not call into the device. */
  void close(boolean poisoned);
}
