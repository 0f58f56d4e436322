package com.vertxcuda.device.impl;

import com.vertxcuda.Addresses;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.context.ContextVerticle;
import com.vertxcuda.device.cuda.CudaBackend;
import com.vertxcuda.device.cuda.CudaUnavailableException;
import com.vertxcuda.device.cuda.PinnedMemory;
import com.vertxcuda.message.DescribeRequest;
import com.vertxcuda.message.DeviceInfo;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.ThreadingModel;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;

/** The context tier deployed in this JVM as a worker on a single-thread pool of its own. */
public final class InProcessContextTier implements ContextTier {

  private final Vertx vertx;
  private final String deploymentId;
  private final DeviceInfo info;

  private InProcessContextTier(Vertx vertx, String deploymentId, DeviceInfo info) {
    this.vertx = vertx;
    this.deploymentId = deploymentId;
    this.info = info;
  }

  /** Deploys generation {@code generation}'s context and waits until it describes itself. */
  public static Future<ContextTier> launch(Vertx vertx, DeviceOptions options, String node, long generation) {
    JsonObject config = options.toJson().put("node", node).put("generation", generation);
    DeploymentOptions worker = new DeploymentOptions()
      .setThreadingModel(ThreadingModel.WORKER)
      .setWorkerPoolName(options.workerPoolNameOrDefault() + "-g" + generation)
      .setWorkerPoolSize(1)
      .setConfig(config);
    return vertx.deployVerticle(ContextVerticle::new, worker).compose(id ->
      vertx.eventBus().<DeviceInfo>request(Addresses.context(node, options.getDevice(), generation),
          new DescribeRequest(), new DeliveryOptions().setSendTimeout(options.getRequestTimeout()))
        .map(Message::body)
        .map(info -> (ContextTier) new InProcessContextTier(vertx, id, info))
        .recover(t -> vertx.undeploy(id).transform(x -> Future.failedFuture(t))));
  }

  @Override
  public DeviceInfo info() {
    return info;
  }

  @Override
  public Future<Void> stop() {
    return vertx.undeploy(deploymentId);
  }

  /** On cuda the buffer is pinned host memory, so its upload goes by DMA straight from it. */
  @Override
  public Buffer allocateTransferBuffer(int bytes) {
    if (!"cuda".equals(info.getBackend())) {
      return ContextTier.super.allocateTransferBuffer(bytes);
    }
    try {
      return CudaBackend.pinnedBuffer(bytes);
    } catch (CudaUnavailableException e) {
      throw new CudaException(FailureCode.OUT_OF_MEMORY, e.getMessage());
    }
  }

  @Override
  public boolean releaseTransferBuffer(Buffer buffer) {
    return PinnedMemory.release(buffer) || ContextTier.super.releaseTransferBuffer(buffer);
  }
}
