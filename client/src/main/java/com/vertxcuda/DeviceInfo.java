package com.vertxcuda;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/** What a device is and where it answers. */
@DataObject
@JsonGen(publicConverter = false)
public class DeviceInfo {

  private String node;
  private int device;
  private String address;
  private String name;
  private String backend;
  private String isolation;
  private String computeCapability;
  private String pciBusId;
  private long totalMemory;
  private long generation;
  private DeviceState state;
  private long load;
  private long pid;
  private long freeMemory;
  private long updated;
  private String bulkAddress;
  private List<String> libraries = new ArrayList<>();

  public DeviceInfo() {
  }

  public DeviceInfo(DeviceInfo other) {
    this(other.toJson());
  }

  public DeviceInfo(JsonObject json) {
    DeviceInfoConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    DeviceInfoConverter.toJson(this, json);
    return json;
  }

  /** The node word of the device's address. */
  public String getNode() { return node; }
  public DeviceInfo setNode(String node) { this.node = node; return this; }

  /** The device index on its node. */
  public int getDevice() { return device; }
  public DeviceInfo setDevice(int device) { this.device = device; return this; }

  /** The device's stable event-bus address. */
  public String getAddress() { return address; }
  public DeviceInfo setAddress(String address) { this.address = address; return this; }

  /** The device's name, e.g. "NVIDIA A100 80GB PCIe" or "host". */
  public String getName() { return name; }
  public DeviceInfo setName(String name) { this.name = name; return this; }

  /** The backend in use: "cuda" or "host". */
  public String getBackend() { return backend; }
  public DeviceInfo setBackend(String backend) { this.backend = backend; return this; }

  /** Where the context tier runs: "in-process" or "process". */
  public String getIsolation() { return isolation; }
  public DeviceInfo setIsolation(String isolation) { this.isolation = isolation; return this; }

  /** Compute capability such as "9.0"; empty on the host backend. */
  public String getComputeCapability() { return computeCapability; }
  public DeviceInfo setComputeCapability(String v) { this.computeCapability = v; return this; }

  /** The GPU's PCI bus id as CUDA reports it, e.g. "0000:3B:00.0"; empty on the host backend. */
  public String getPciBusId() { return pciBusId; }
  public DeviceInfo setPciBusId(String v) { this.pciBusId = v; return this; }

  /** Device memory in bytes (or the configured limit, if lower). */
  public long getTotalMemory() { return totalMemory; }
  public DeviceInfo setTotalMemory(long v) { this.totalMemory = v; return this; }

  /** The current context generation. */
  public long getGeneration() { return generation; }
  public DeviceInfo setGeneration(long v) { this.generation = v; return this; }

  public DeviceState getState() { return state; }
  public DeviceInfo setState(DeviceState state) { this.state = state; return this; }

  /** Process id of the process that runs the context (the device host in process isolation). */
  public long getPid() { return pid; }
  public DeviceInfo setPid(long v) { this.pid = v; return this; }

  /** The libraries the current context serves ("blas", "fft", "rand", "kernel"). */
  public List<String> getLibraries() { return libraries; }
  public DeviceInfo setLibraries(List<String> v) { this.libraries = v; return this; }

  /** Requests in flight plus queued, for placement. */
  public long getLoad() { return load; }
  public DeviceInfo setLoad(long v) { this.load = v; return this; }

  /**
   * Bytes the device can still allocate for buffers: its memory limit (or the backend's free
   * memory, if lower) less what buffers and libraries hold, as of {@link #getUpdated()}.
   */
  public long getFreeMemory() { return freeMemory; }
  public DeviceInfo setFreeMemory(long v) { this.freeMemory = v; return this; }

  /**
   * Where the device's node serves its bulk side channel ({@code host:port}; TLS when the event bus
   * is): remote uploads and downloads larger than 1 MiB stream there. Null where there is none (not
   * clustered).
   */
  public String getBulkAddress() { return bulkAddress; }
  public DeviceInfo setBulkAddress(String v) { this.bulkAddress = v; return this; }

  /** When the device published this entry, in ms since the epoch on the device's clock. */
  public long getUpdated() { return updated; }
  public DeviceInfo setUpdated(long v) { this.updated = v; return this; }
}
