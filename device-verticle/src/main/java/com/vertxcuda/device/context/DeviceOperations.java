package com.vertxcuda.device.context;

import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.RequestHandler;
import com.vertxcuda.device.spi.RequestType;

import java.util.List;

/**
 * The device's own operations of one context, by job: memory, transfers, copies, pipelines and
 * control. The {@link RequestTable#DEVICE} descriptors point at them; copies and transfers run on
 * the context's copy stream.
 */
final class DeviceOperations implements RequestHandler {

  private final MemoryOperations memory;
  private final TransferOperations transfers;
  private final CopyOperations copies;
  private final Pipelines pipelines;
  private final ControlOperations control;

  DeviceOperations(ContextRuntime runtime, GpuStream stream) {
    this.memory = new MemoryOperations(runtime, stream);
    this.transfers = new TransferOperations(runtime, stream);
    this.copies = new CopyOperations(runtime, stream);
    this.pipelines = new Pipelines(runtime);
    this.control = new ControlOperations(runtime, stream);
  }

  @Override
  public List<RequestType<?, ?>> types() {
    return RequestTable.DEVICE;
  }

  MemoryOperations memory() {
    return memory;
  }

  TransferOperations transfers() {
    return transfers;
  }

  CopyOperations copies() {
    return copies;
  }

  Pipelines pipelines() {
    return pipelines;
  }

  ControlOperations control() {
    return control;
  }
}
