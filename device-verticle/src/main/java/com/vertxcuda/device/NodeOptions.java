package com.vertxcuda.device;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/** Which devices a node serves and how: one option set for {@link DeviceNode#deploy}. */
@DataObject
@JsonGen(publicConverter = false)
public class NodeOptions {

  /** Default number of devices the host backend simulates when every device is asked for: 1. */
  public static final int DEFAULT_HOST_DEVICES = 1;

  private List<Integer> devices = new ArrayList<>();
  private DeviceOptions deviceOptions = new DeviceOptions();
  private int hostDevices = DEFAULT_HOST_DEVICES;

  public NodeOptions() {
  }

  public NodeOptions(NodeOptions other) {
    this(other.toJson());
  }

  public NodeOptions(JsonObject json) {
    this();
    NodeOptionsConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    NodeOptionsConverter.toJson(this, json);
    return json;
  }

  /**
   * The device ordinals to serve; empty (the default) means every visible device: each GPU the
   * driver shows (honouring {@code CUDA_VISIBLE_DEVICES}), or {@link #getHostDevices()} on the host
   * backend.
   */
  public List<Integer> getDevices() { return devices; }
  public NodeOptions setDevices(List<Integer> devices) { this.devices = devices == null ? new ArrayList<>() : devices; return this; }

  /**
   * The options every device is deployed with; each device gets a copy with its own ordinal
   * ({@link DeviceOptions#getDevice()} here is ignored).
   */
  public DeviceOptions getDeviceOptions() { return deviceOptions; }
  public NodeOptions setDeviceOptions(DeviceOptions deviceOptions) { this.deviceOptions = deviceOptions == null ? new DeviceOptions() : deviceOptions; return this; }

  /**
   * How many devices the host backend simulates when every visible device is asked for: each an
   * independent host context with its own ordinal, memory ({@link DeviceOptions#getHostMemory()})
   * and failure domain. Lets every multi-device path run without a GPU.
   */
  public int getHostDevices() { return hostDevices; }
  public NodeOptions setHostDevices(int hostDevices) { this.hostDevices = hostDevices; return this; }
}
