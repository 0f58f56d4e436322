package com.vertxcuda.codec;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.Library;
import com.vertxcuda.PipelineHandle;
import com.vertxcuda.message.PipelineStep;
import com.vertxcuda.message.RecordRequest;
import com.vertxcuda.message.ReleasePipelineRequest;
import com.vertxcuda.message.ReplayRequest;
import io.vertx.core.buffer.Buffer;
import com.vertxcuda.message.AllocRequest;
import com.vertxcuda.message.CopyRequest;
import com.vertxcuda.message.DescribeRequest;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.GpuReadings;
import com.vertxcuda.DeviceState;
import com.vertxcuda.DeviceStats;
import com.vertxcuda.message.DownloadIntoRequest;
import com.vertxcuda.message.DownloadReply;
import com.vertxcuda.message.DownloadRequest;
import com.vertxcuda.message.FaultRequest;
import com.vertxcuda.message.FillRequest;
import com.vertxcuda.message.FreeRequest;
import com.vertxcuda.message.KeepRequest;
import com.vertxcuda.message.StatsRequest;
import com.vertxcuda.message.UploadRequest;

import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Binary wire formats of the core message types: the handles, requests and replies of the root and
 * {@code message} packages. Bump a type's version when its layout changes.
 */
public final class CoreWireTypes {

  private CoreWireTypes() {
  }

  public static final WireType<BufferHandle> HANDLE = WireType.of(BufferHandle.class, 1,
    (h, out) -> out.writeHandle(h),
    in -> {
      BufferHandle h = in.readHandle();
      if (h == null) {
        throw new WireFormatException("malformed BufferHandle on the wire: null");
      }
      return h;
    });

  public static final WireType<AllocRequest> ALLOC = WireType.of(AllocRequest.class, 3,
    (r, out) -> out.writeEnum(r.getDtype()).writeLong(r.getCount()).writeBoolean(r.isUninitialized()),
    in -> new AllocRequest(in.readEnum(DType.class), in.readLong()).setUninitialized(in.readBoolean()));

  public static final WireType<KeepRequest> KEEP = WireType.of(KeepRequest.class, 1,
    (r, out) -> out.writeHandle(r.getHandle()),
    in -> new KeepRequest(in.readHandle()));

  public static final WireType<FreeRequest> FREE = WireType.of(FreeRequest.class, 1,
    (r, out) -> out.writeHandle(r.getHandle()),
    in -> new FreeRequest(in.readHandle()));

  public static final WireType<UploadRequest> UPLOAD = WireType.of(UploadRequest.class, 1,
    (r, out) -> out.writeHandle(r.getHandle()).writeBuffer(r.getData()),
    in -> new UploadRequest(in.readHandle(), in.readBuffer()));

  public static final WireType<DownloadRequest> DOWNLOAD = WireType.of(DownloadRequest.class, 1,
    (r, out) -> out.writeHandle(r.getHandle()),
    in -> new DownloadRequest(in.readHandle()));

  public static final WireType<DownloadIntoRequest> DOWNLOAD_INTO = WireType.of(DownloadIntoRequest.class, 1,
    (r, out) -> out.writeHandle(r.getHandle()).writeBuffer(r.getData()),
    in -> new DownloadIntoRequest(in.readHandle(), in.readBuffer()));

  public static final WireType<DownloadReply> DOWNLOAD_REPLY = WireType.of(DownloadReply.class, 1,
    (r, out) -> out.writeHandle(r.getHandle()).writeBuffer(r.getData()),
    in -> new DownloadReply(in.readHandle(), in.readBuffer()));

  public static final WireType<CopyRequest> COPY = WireType.of(CopyRequest.class, 2, // 2: handles by reference
    (r, out) -> out.writeHandle(r.getSource()).writeHandle(r.getTarget()),
    in -> new CopyRequest(in.readHandle(), in.readHandle()));

  public static final WireType<FillRequest> FILL = WireType.of(FillRequest.class, 1,
    (r, out) -> out.writeHandle(r.getHandle()).writeLong(r.getBits()),
    in -> new FillRequest(in.readHandle(), in.readLong()));

  public static final WireType<StatsRequest> STATS = WireType.of(StatsRequest.class, 1,
    (r, out) -> { },
    in -> new StatsRequest());

  public static final WireType<DescribeRequest> DESCRIBE = WireType.of(DescribeRequest.class, 1,
    (r, out) -> { },
    in -> new DescribeRequest());

  public static final WireType<DeviceStats> DEVICE_STATS = WireType.of(DeviceStats.class, 5,
    (s, out) -> {
      out.writeLong(s.getGeneration()).writeEnum(s.getState()).writeLong(s.getBytesAllocated())
        .writeLong(s.getBuffersAllocated()).writeLong(s.getCachedBytes())
        .writeLong(s.getBackendFreeBytes()).writeLong(s.getBackendTotalBytes())
        .writeLong(s.getInFlight()).writeLong(s.getQueueDepth()).writeLong(s.getOperationsServed());
      Map<String, Long> failures = s.getFailuresByCode() == null ? Map.of() : s.getFailuresByCode();
      out.writeInt(failures.size());
      failures.forEach((k, v) -> out.writeString(k).writeLong(v));
      out.writeBoolean(s.isSpareReady());
      Map<String, Long> library = s.getLibraryBytes() == null ? Map.of() : s.getLibraryBytes();
      out.writeInt(library.size());
      library.forEach((k, v) -> out.writeString(k).writeLong(v));
      Map<String, Long> owners = s.getOwnerBytes() == null ? Map.of() : s.getOwnerBytes();
      out.writeInt(owners.size());
      owners.forEach((k, v) -> out.writeString(k).writeLong(v));
      // The GPU's own readings (NVML), where the node has them: their JSON form, read back as it was written.
      out.writeString(s.getGpu() == null ? null : s.getGpu().toJson().encode());
    },
    in -> {
      DeviceStats s = new DeviceStats().setGeneration(in.readLong()).setState(in.readEnum(DeviceState.class))
        .setBytesAllocated(in.readLong()).setBuffersAllocated(in.readLong()).setCachedBytes(in.readLong())
        .setBackendFreeBytes(in.readLong()).setBackendTotalBytes(in.readLong())
        .setInFlight(in.readLong()).setQueueDepth(in.readLong()).setOperationsServed(in.readLong());
      int n = in.readCount(1024, 12); // each counter: a name (4 + bytes) and a long
      Map<String, Long> failures = new HashMap<>();
      for (int i = 0; i < n; i++) {
        failures.put(in.readString(), in.readLong());
      }
      s.setFailuresByCode(failures).setSpareReady(in.readBoolean());
      int libraries = in.readInt();
      if (libraries < 0 || libraries > 64) {
        throw new WireFormatException("malformed DeviceStats on the wire: " + libraries + " library counters");
      }
      Map<String, Long> library = new HashMap<>();
      for (int i = 0; i < libraries; i++) {
        library.put(in.readString(), in.readLong());
      }
      int owners = in.readCount(1 << 16, 12);
      Map<String, Long> owner = new HashMap<>();
      for (int i = 0; i < owners; i++) {
        owner.put(in.readString(), in.readLong());
      }
      String gpu = in.readString();
      return s.setLibraryBytes(library).setOwnerBytes(owner).setGpu(gpu == null ? null : gpuReadings(gpu));
    });

  public static final WireType<DeviceInfo> DEVICE_INFO = WireType.of(DeviceInfo.class, 6,
    (d, out) -> out.writeString(d.getNode()).writeInt(d.getDevice()).writeString(d.getAddress())
      .writeString(d.getName()).writeString(d.getBackend()).writeString(d.getIsolation())
      .writeString(d.getComputeCapability()).writeLong(d.getTotalMemory()).writeLong(d.getGeneration())
      .writeEnum(d.getState()).writeLong(d.getLoad()).writeLong(d.getPid()).writeString(
        d.getLibraries() == null ? null : String.join(",", d.getLibraries()))
      .writeLong(d.getFreeMemory()).writeLong(d.getUpdated()).writeString(d.getBulkAddress())
      .writeString(d.getPciBusId()),
    in -> new DeviceInfo().setNode(in.readString()).setDevice(in.readInt()).setAddress(in.readString())
      .setName(in.readString()).setBackend(in.readString()).setIsolation(in.readString())
      .setComputeCapability(in.readString()).setTotalMemory(in.readLong()).setGeneration(in.readLong())
      .setState(in.readEnum(DeviceState.class)).setLoad(in.readLong()).setPid(in.readLong())
      .setLibraries(libraries(in.readString())).setFreeMemory(in.readLong()).setUpdated(in.readLong())
      .setBulkAddress(in.readString()).setPciBusId(in.readString()));

  private static GpuReadings gpuReadings(String json) {
    try {
      return new GpuReadings(new JsonObject(json));
    } catch (RuntimeException e) {
      throw new WireFormatException("malformed GPU readings in DeviceStats on the wire: " + e.getMessage());
    }
  }

  private static List<String> libraries(String joined) {
    return joined == null ? null : joined.isEmpty() ? new ArrayList<>()
      : new ArrayList<>(List.of(joined.split(",")));
  }

  public static final WireType<DeviceEvent> DEVICE_EVENT = WireType.of(DeviceEvent.class, 1,
    (e, out) -> out.writeEnum(e.getType()).writeString(e.getNode()).writeInt(e.getDevice())
      .writeLong(e.getOldGeneration()).writeLong(e.getNewGeneration()).writeString(e.getReason()),
    in -> new DeviceEvent(in.readEnum(DeviceEvent.Type.class), in.readString(), in.readInt(),
      in.readLong(), in.readLong(), in.readString()));

  public static final WireType<FaultRequest> FAULT = WireType.of(FaultRequest.class, 1,
    (f, out) -> out.writeEnum(f.getKind()),
    in -> new FaultRequest(in.readEnum(FaultRequest.Kind.class)));

  public static final WireType<PipelineHandle> PIPELINE_HANDLE = WireType.of(PipelineHandle.class, 2, // 2: the token
    (p, out) -> writePipeline(p, out),
    in -> {
      PipelineHandle p = readPipeline(in);
      if (p == null) {
        throw new WireFormatException("malformed PipelineHandle on the wire: null");
      }
      return p;
    });

  public static final WireType<RecordRequest> RECORD = WireType.of(RecordRequest.class, 1,
    (r, out) -> {
      List<PipelineStep> steps = r.getSteps() == null ? List.of() : r.getSteps();
      out.writeInt(steps.size());
      for (PipelineStep s : steps) {
        if (s == null || s.body() == null) {
          throw new IllegalArgumentException("a pipeline step without a request body");
        }
        @SuppressWarnings("unchecked")
        WireType<Object> type = (WireType<Object>) CudaCodecs.wireTypeOf(s.body());
        Buffer body = Buffer.buffer();
        CudaCodecs.codec(type).encodeToWire(body, s.body());
        out.writeEnum(s.library()).writeString(type.name()).writeBuffer(body);
      }
    },
    in -> {
      // Each step: a library (4 bytes or more), a type name and a body (4 + 5 bytes or more).
      int n = in.readCount(RecordRequest.MAX_STEPS, 17);
      List<PipelineStep> steps = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        Library library = in.readEnum(Library.class);
        String name = in.readString();
        Buffer body = in.readBuffer();
        if (name == null || body == null) {
          throw new WireFormatException("malformed RecordRequest on the wire: step " + i + " without type or body");
        }
        WireType<?> type;
        try {
          type = CudaCodecs.wireTypeNamed(name);
        } catch (IllegalArgumentException e) {
          throw new WireFormatException("malformed RecordRequest on the wire: step " + i + ": " + e.getMessage());
        }
        if (type.type() == RecordRequest.class) {
          throw new WireFormatException("malformed RecordRequest on the wire: step " + i + " is a RecordRequest");
        }
        if (body.length() < 5 || body.getInt(0) != body.length() - 4) {
          throw new WireFormatException("malformed RecordRequest on the wire: step " + i + " has a body of "
            + body.length() + " bytes that does not match its length");
        }
        steps.add(new PipelineStep(library, CudaCodecs.codec(type).decodeFromWire(0, body)));
      }
      return new RecordRequest(steps);
    });

  public static final WireType<ReplayRequest> REPLAY = WireType.of(ReplayRequest.class, 2, // 2: the pipeline's token
    (r, out) -> writePipeline(r.getPipeline(), out),
    in -> new ReplayRequest(readPipeline(in)));

  public static final WireType<ReleasePipelineRequest> RELEASE_PIPELINE = WireType.of(ReleasePipelineRequest.class, 2, // 2: the pipeline's token
    (r, out) -> writePipeline(r.getPipeline(), out),
    in -> new ReleasePipelineRequest(readPipeline(in)));

  private static void writePipeline(PipelineHandle p, WireOut out) {
    out.writeBoolean(p != null);
    if (p != null) {
      out.writeString(p.node()).writeInt(p.device()).writeLong(p.generation()).writeLong(p.id())
        .writeInt(p.steps()).writeBoolean(p.captured()).writeLong(p.tokenHigh()).writeLong(p.tokenLow());
    }
  }

  private static PipelineHandle readPipeline(WireIn in) {
    if (!in.readBoolean()) {
      return null;
    }
    String node = in.readString();
    if (node == null) {
      throw new WireFormatException("malformed pipeline handle on the wire: no node");
    }
    return new PipelineHandle(node, in.readInt(), in.readLong(), in.readLong(), in.readInt(), in.readBoolean(),
      in.readLong(), in.readLong());
  }

  public static final List<WireType<?>> ALL = List.of(HANDLE, ALLOC, FREE, UPLOAD, DOWNLOAD, DOWNLOAD_INTO,
    DOWNLOAD_REPLY, COPY, FILL, STATS, DESCRIBE, DEVICE_STATS, DEVICE_INFO, DEVICE_EVENT, FAULT, KEEP,
    PIPELINE_HANDLE, RECORD, REPLAY, RELEASE_PIPELINE);
}
