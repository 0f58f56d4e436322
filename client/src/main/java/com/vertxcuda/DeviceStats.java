package com.vertxcuda;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

import java.util.HashMap;
import java.util.Map;

/** A device's counters at one moment. */
@DataObject
@JsonGen(publicConverter = false)
public class DeviceStats {

  private long generation;
  private DeviceState state;
  private long bytesAllocated;
  private long buffersAllocated;
  private long cachedBytes;
  private long backendFreeBytes;
  private long backendTotalBytes;
  private long inFlight;
  private long queueDepth;
  private long operationsServed;
  private Map<String, Long> failuresByCode = new HashMap<>();
  private boolean spareReady;
  private Map<String, Long> libraryBytes = new HashMap<>();
  private Map<String, Long> ownerBytes = new HashMap<>();
  private GpuReadings gpu;

  public DeviceStats() {
  }

  public DeviceStats(JsonObject json) {
    DeviceStatsConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    DeviceStatsConverter.toJson(this, json);
    return json;
  }

  /** The current context generation. */
  public long getGeneration() { return generation; }
  public DeviceStats setGeneration(long generation) { this.generation = generation; return this; }

  public DeviceState getState() { return state; }
  public DeviceStats setState(DeviceState state) { this.state = state; return this; }

  /** Bytes held by live buffers (as requested by users). */
  public long getBytesAllocated() { return bytesAllocated; }
  public DeviceStats setBytesAllocated(long v) { this.bytesAllocated = v; return this; }

  /** Live buffers. */
  public long getBuffersAllocated() { return buffersAllocated; }
  public DeviceStats setBuffersAllocated(long v) { this.buffersAllocated = v; return this; }

  /** Bytes the caching allocator holds for reuse (not in use by any buffer). */
  public long getCachedBytes() { return cachedBytes; }
  public DeviceStats setCachedBytes(long v) { this.cachedBytes = v; return this; }

  /** Free device memory as the backend reports it. */
  public long getBackendFreeBytes() { return backendFreeBytes; }
  public DeviceStats setBackendFreeBytes(long v) { this.backendFreeBytes = v; return this; }

  /** Total device memory as the backend reports it. */
  public long getBackendTotalBytes() { return backendTotalBytes; }
  public DeviceStats setBackendTotalBytes(long v) { this.backendTotalBytes = v; return this; }

  /** Requests forwarded to the context and not yet answered. */
  public long getInFlight() { return inFlight; }
  public DeviceStats setInFlight(long v) { this.inFlight = v; return this; }

  /** Requests waiting for a context. */
  public long getQueueDepth() { return queueDepth; }
  public DeviceStats setQueueDepth(long v) { this.queueDepth = v; return this; }

  /** Requests answered with success since the device started. */
  public long getOperationsServed() { return operationsServed; }
  public DeviceStats setOperationsServed(long v) { this.operationsServed = v; return this; }

  /** Requests answered with a failure, by {@link com.vertxcuda.FailureCode} name. */
  public Map<String, Long> getFailuresByCode() { return failuresByCode; }
  public DeviceStats setFailuresByCode(Map<String, Long> v) { this.failuresByCode = v; return this; }

  /**
   * Whether a spare device host has started and stands ready for the next generation (process
   * isolation with {@code spareDeviceHost}): a lost context is then replaced by a switch, several times
   * faster than starting a device host. While a spare starts it shares the GPU with the serving context.
   */
  public boolean isSpareReady() { return spareReady; }
  public DeviceStats setSpareReady(boolean v) { this.spareReady = v; return this; }

  /**
   * Device memory the libraries hold outside any buffer, in bytes, by library ("fft": cached plans
   * and their work areas; "kernel": loaded modules). It counts against
   * {@code DeviceOptions.memoryLimit} together with {@link #getBytesAllocated()}.
   */
  public Map<String, Long> getLibraryBytes() { return libraryBytes; }
  public DeviceStats setLibraryBytes(Map<String, Long> v) { this.libraryBytes = v; return this; }

  /**
   * Bytes of buffers each node holds, by node id (buffers handed to the device with {@code keep}
   * are in no node's count). A node's entry goes when it frees its last buffer or leaves the cluster.
   */
  public Map<String, Long> getOwnerBytes() { return ownerBytes; }
  public DeviceStats setOwnerBytes(Map<String, Long> v) { this.ownerBytes = v; return this; }

  /**
   * The GPU's own meters (utilisation, power, temperature, clocks, XID and ECC errors) as the serving
   * node last read them from NVIDIA's driver; null where there are none (the host backend, no NVML,
   * or {@code DeviceOptions.gpuMetersInterval} 0).
   */
  public GpuReadings getGpu() { return gpu; }
  public DeviceStats setGpu(GpuReadings v) { this.gpu = v; return this; }
}
