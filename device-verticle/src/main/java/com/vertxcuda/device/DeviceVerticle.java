package com.vertxcuda.device;

import com.vertxcuda.device.impl.DeviceSupervisor;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;

/**
 * The outer tier of one GPU: a stable address that outlives any number of context incarnations and
 * owns the generation. It supervises: a poisoned, stuck or dead context is replaced, the generation
 * goes up, and subscribers hear of it on the events address. Requests enter through its admission
 * (from the event bus, or from a typed client's own thread), which hands each request straight to
 * the current context tier's one submission queue. Every request accepted gets exactly one reply;
 * replies leave from where the work completes, not from here. What it does is
 * {@link DeviceSupervisor}'s; this class is what users deploy and call.
 *
 * <p>Its state lives on its event loop; it never blocks.
 */
public class DeviceVerticle extends VerticleBase {

  private DeviceOptions options;
  private RequestListener requestListener;
  // Volatile: the transfer-buffer methods may be called from any thread.
  private volatile DeviceSupervisor supervisor;

  /** A device configured by the deployment's config (DeviceOptions JSON). */
  public DeviceVerticle() {
  }

  public DeviceVerticle(DeviceOptions options) {
    this.options = new DeviceOptions(options);
  }

  /**
   * Reports every client request this device answers to {@code listener} (metrics); set it before
   * deploying. Null: none.
   */
  public DeviceVerticle setRequestListener(RequestListener listener) {
    this.requestListener = listener;
    return this;
  }

  @Override
  public Future<?> start() {
    if (options == null) {
      options = new DeviceOptions(config());
    }
    supervisor = new DeviceSupervisor(vertx, options, requestListener);
    return supervisor.start();
  }

  @Override
  public Future<?> stop() {
    return supervisor.stop();
  }

  /** The device's stable address (null before it starts). */
  public String address() {
    DeviceSupervisor s = supervisor;
    return s == null ? null : s.address();
  }

  /**
   * An empty buffer with room for {@code bytes} that uploads without a host copy: in process
   * isolation it lies in the shared-memory region. Fill it with the append methods; release it with
   * {@link #releaseTransferBuffer} (or let it become unreachable). Thread-safe.
   */
  public Buffer allocateTransferBuffer(int bytes) {
    return supervisor.transferMemory().allocate(bytes);
  }

  /**
   * Bytes of transfer buffers and downloads lent to users now and not yet returned (released, or
   * collected once unreachable): this device's shared region in process isolation, plus this JVM's
   * host buffer pool and, on cuda, its pinned transfer buffers, which every in-process device shares
   * (a download lent in pinned memory in-process on cuda is not counted).
   */
  public long heldTransferBytes() {
    return supervisor.transferMemory().held();
  }

  /**
   * Bytes of this device's transfer budget ({@link DeviceOptions#getTransferBudget()}) in use now:
   * downloads, landings and transfer buffers lent to users and not yet returned, and downloads
   * admitted and not yet answered.
   */
  public long chargedTransferBytes() {
    return supervisor.chargedTransferBytes();
  }

  /** Returns a transfer buffer, or a buffer a download handed back, to its pool at once. */
  public boolean releaseTransferBuffer(Buffer buffer) {
    return supervisor.transferMemory().release(buffer);
  }
}
