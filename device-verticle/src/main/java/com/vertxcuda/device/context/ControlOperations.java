package com.vertxcuda.device.context;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.FaultInjection;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.DeviceStats;
import com.vertxcuda.message.FaultRequest;

import java.util.ArrayList;
import java.util.List;

/** The device's control operations on the submission thread: stats, describe and fault injection. */
final class ControlOperations {

  private static final System.Logger LOG = System.getLogger(ControlOperations.class.getName());

  private final ContextRuntime runtime;
  private final DeviceContext device;
  private final GpuStream stream;

  ControlOperations(ContextRuntime runtime, GpuStream stream) {
    this.runtime = runtime;
    this.device = runtime.device();
    this.stream = stream;
  }

  DeviceStats stats() throws BackendException {
    long[] mem = device.memoryInfo();
    AllocationTable table = runtime.allocations();
    return new DeviceStats()
      .setGeneration(runtime.generation())
      .setBytesAllocated(table.liveBytes())
      .setBuffersAllocated(table.liveBuffers())
      .setLibraryBytes(table.libraryBytes())
      .setOwnerBytes(table.ownerBytes())
      .setCachedBytes(device.cachedBytes())
      .setBackendFreeBytes(mem[0])
      .setBackendTotalBytes(mem[1]);
  }

  DeviceInfo describe() throws BackendException {
    long total = device.memoryInfo()[1];
    long limit = runtime.options().getMemoryLimit();
    List<String> libraries = new ArrayList<>();
    runtime.loop().registered().forEach(l -> libraries.add(l.suffix()));
    return new DeviceInfo()
      .setNode(runtime.node())
      .setDevice(runtime.deviceIndex())
      .setName(device.deviceName())
      .setBackend(runtime.backend())
      .setComputeCapability(device.computeCapability())
      .setPciBusId(device.pciBusId())
      .setTotalMemory(limit > 0 ? Math.min(limit, total) : total)
      .setGeneration(runtime.generation())
      .setPid(ProcessHandle.current().pid())
      .setLibraries(libraries);
  }

  void fault(Request r, FaultRequest f) throws BackendException {
    if (!runtime.options().isFaultInjection() || !(device instanceof FaultInjection)) {
      throw new CudaException(FailureCode.UNSUPPORTED, "fault injection needs DeviceOptions.faultInjection");
    }
    if (f.getKind() == null) {
      throw new CudaException(FailureCode.BAD_REQUEST, "kind is missing");
    }
    FaultInjection faults = (FaultInjection) device;
    switch (f.getKind()) {
      case POISON:
        faults.poison(stream);
        runtime.replyWhenDone(r, device.record(stream), () -> f);
        break;
      case FAIL_NEXT_ALLOCATION:
        faults.failNextAllocation();
        r.reply(f);
        break;
      case FAIL_NEXT_OPERATION:
        faults.failNextOperation();
        r.reply(f);
        break;
      default:
        // A hung kernel: the submission thread waits on it until the context is closed.
        LOG.log(System.Logger.Level.WARNING, "context generation " + runtime.generation() + " stalled on request");
        faults.stall(stream, runtime.loop()::isRunning);
        r.fail(new CudaException(FailureCode.CONTEXT_LOST, "the context was stalled on request and closed"));
    }
  }
}
