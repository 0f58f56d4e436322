package com.vertxcuda.device.context;

import com.vertxcuda.Failures;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.cuda.CudaBackend;
import com.vertxcuda.device.cuda.CudaUnavailableException;
import com.vertxcuda.device.cuda.PinnedMemory;
import com.vertxcuda.device.memory.HostTransferMemory;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.internal.TransferMemory;
import com.vertxcuda.DeviceInfo;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;

/**
 * The context tier in this JVM: requests go straight into the context's submission queue, with no
 * event-bus hop between the device verticle and the context.
 */
public final class InProcessContextTier implements ContextTier {

  /** Set once the device stops this tier: it takes no more requests. */
  private volatile boolean stopped;

  private final Vertx vertx;
  private final String deploymentId;
  private final ContextVerticle context;
  private final DeviceInfo info;

  private InProcessContextTier(Vertx vertx, String deploymentId, ContextVerticle context, DeviceInfo info) {
    this.vertx = vertx;
    this.deploymentId = deploymentId;
    this.context = context;
    this.info = info;
  }

  /** Deploys generation {@code generation}'s context and completes once it describes itself. */
  public static Future<ContextTier> launch(Vertx vertx, DeviceOptions options, String node, long generation,
                                           ContextTier.Listener listener) {
    ContextVerticle context = new ContextVerticle(options, node, generation, new ContextVerticle.Listener() {
      @Override
      public void poisoned(String reason) {
        listener.lost(reason);
      }

      @Override
      public void stopped() {
        listener.stopped();
      }
    });
    return vertx.deployVerticle(context).compose(id -> context.describe()
      .map(info -> (ContextTier) new InProcessContextTier(vertx, id, context, info))
      .recover(t -> vertx.undeploy(id).transform(x -> Future.failedFuture(t))));
  }

  /** The context verticle (for the device host, which serves it over its link). */
  public ContextVerticle context() {
    return context;
  }

  @Override
  public DeviceInfo info() {
    return info;
  }

  @Override
  public void submit(Request request) {
    context.submit(request);
  }

  @Override
  public Future<Long> stalledMillis() {
    return Future.succeededFuture(context.stalledNanos() / 1_000_000);
  }

  @Override
  public boolean ended() {
    return stopped;
  }

  @Override
  public Future<Void> stop() {
    stopped = true;
    return vertx.undeploy(deploymentId);
  }

  /** On cuda, pinned memory; on any other backend, the host buffer pool. */
  @Override
  public TransferMemory transferMemory() {
    return "cuda".equals(info.getBackend()) ? PINNED : HostTransferMemory.POOLED;
  }

  /**
   * Transfer buffers of pinned host memory, whose uploads go by DMA straight from them; only pinned
   * memory goes by DMA as it is, so any other memory the pump stages. Landings come from the pool.
   */
  private static final TransferMemory PINNED = new HostTransferMemory() {
    @Override
    public Buffer allocate(int bytes) {
      try {
        return CudaBackend.pinnedBuffer(bytes);
      } catch (CudaUnavailableException e) {
        // No pinned memory is the driver's OUT_OF_MEMORY, carried as the cause.
        throw Failures.toCudaException(e);
      }
    }

    @Override
    public boolean lends(Buffer buffer) {
      return PinnedMemory.isPinned(buffer);
    }

    /** The pool's lent bytes and the pinned transfer buffers lent: transfer buffers here are pinned. */
    @Override
    public long held() {
      return super.held() + PinnedMemory.transferBufferBytes();
    }
  };
}
