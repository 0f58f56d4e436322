package com.vertxcuda.testing;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.message.AllocRequest;
import com.vertxcuda.message.CopyRequest;
import com.vertxcuda.message.DescribeRequest;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.GpuReadings;
import com.vertxcuda.DeviceState;
import com.vertxcuda.DeviceStats;
import com.vertxcuda.message.DownloadReply;
import com.vertxcuda.message.DownloadRequest;
import com.vertxcuda.message.FaultRequest;
import com.vertxcuda.message.FillRequest;
import com.vertxcuda.message.FreeRequest;
import com.vertxcuda.message.KeepRequest;
import com.vertxcuda.internal.CopyInAbort;
import com.vertxcuda.internal.CopyInRequest;
import com.vertxcuda.internal.CopyOutRequest;
import com.vertxcuda.internal.ReclaimRequest;
import com.vertxcuda.message.StatsRequest;
import com.vertxcuda.message.UploadRequest;
import io.vertx.core.buffer.Buffer;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Populated samples of the core message types (codec tests and the wire fuzz of every module). */
public final class CoreSamples {

  public static final BufferHandle HANDLE = BufferHandle.issue("node-1", 2, 7, 42, DType.F32, 1000);

  public static final com.vertxcuda.PipelineHandle PIPELINE = new com.vertxcuda.PipelineHandle("node-1", 2, 7, 9, 10, true,
    0x0123456789abcdefL, 0xfedcba9876543210L);

  private CoreSamples() {
  }

  /** One populated sample of every core message type. */
  public static List<Object> all() {
    Map<String, Long> failures = new HashMap<>();
    failures.put("NOT_FOUND", 3L);
    return List.of(
      HANDLE,
      HANDLE.view(10, 20),
      new AllocRequest(DType.BF16, 123),
      new KeepRequest(HANDLE),
      new ReclaimRequest("departed-node"),
      new FreeRequest(HANDLE),
      new UploadRequest(HANDLE.view(0, 2), Buffer.buffer().appendFloatLE(1.5f).appendFloatLE(-2f)),
      new DownloadRequest(HANDLE),
      new com.vertxcuda.message.DownloadIntoRequest(HANDLE.view(0, 1), Buffer.buffer(new byte[] {1, 2, 3, 4})),
      new DownloadReply(HANDLE, Buffer.buffer(new byte[] {1, 2, 3, 4})),
      new CopyRequest(HANDLE, HANDLE.view(5, 5)),
      new CopyInRequest(HANDLE, HANDLE.view(5, 5), 78L),
      new CopyOutRequest(HANDLE, HANDLE.view(5, 5), 78L),
      new CopyInAbort(HANDLE.view(5, 5), 78L),
      FillRequest.of(HANDLE, 3.25),
      new StatsRequest(),
      new DescribeRequest(),
      new DeviceStats().setGeneration(3).setState(DeviceState.READY).setBytesAllocated(4096)
        .setBuffersAllocated(2).setCachedBytes(512).setBackendFreeBytes(1 << 20).setBackendTotalBytes(1 << 30)
        .setInFlight(1).setQueueDepth(4).setOperationsServed(99).setFailuresByCode(failures).setSpareReady(true)
        .setLibraryBytes(Map.of("fft", 3L << 20, "kernel", 4096L)).setOwnerBytes(Map.of("node-a", 1L << 20))
        .setGpu(new GpuReadings().setReadAt(1_764_000_000_000L).setPciBusId("00000000:19:00.0").setUtilizationPercent(97)
          .setMemoryUsedBytes(3L << 30).setMemoryTotalBytes(80L << 30).setPowerWatts(612.5).setTemperatureCelsius(61)
          .setSmClockHz(1_980_000_000L).setThrottleReasons(4).setXidErrors(1).setLastXid(79).setEccUncorrectedErrors(0)),
      new DeviceInfo().setNode("n").setDevice(1).setAddress("vertx-cuda.n.1").setName("NVIDIA H200")
        .setBackend("cuda").setIsolation("process").setComputeCapability("9.0").setTotalMemory(1L << 37)
        .setGeneration(4).setState(DeviceState.REBUILDING).setLoad(12).setPid(4242).setLibraries(List.of("blas", "fft"))
        .setFreeMemory(1L << 36).setUpdated(1_764_000_000_000L).setBulkAddress("10.0.0.5:40123")
        .setPciBusId("00000000:19:00.0"),
      new DeviceEvent(DeviceEvent.Type.GENERATION_CHANGED, "n", 0, 1, 2, "CUDA_ERROR_ILLEGAL_ADDRESS"),
      new FaultRequest(FaultRequest.Kind.POISON),
      PIPELINE,
      new com.vertxcuda.message.RecordRequest(List.of(
        new com.vertxcuda.message.PipelineStep(null, FillRequest.of(HANDLE, 1.5)),
        new com.vertxcuda.message.PipelineStep(null, new CopyRequest(HANDLE.view(0, 5), HANDLE.view(5, 5))))),
      new com.vertxcuda.message.ReplayRequest(PIPELINE),
      new com.vertxcuda.message.ReleasePipelineRequest(PIPELINE));
  }
}
