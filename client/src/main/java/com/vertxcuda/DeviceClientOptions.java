package com.vertxcuda;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/** Which device a {@link DeviceClient} talks to, and how long it waits. */
@DataObject
@JsonGen(publicConverter = false)
public class DeviceClientOptions {

  /** Default device index: 0. */
  public static final int DEFAULT_DEVICE = 0;
  /** Default request timeout: 30 000 ms. */
  public static final long DEFAULT_TIMEOUT = 30_000;

  /** Default largest message to a device on another node: 8 MiB. */
  public static final int DEFAULT_MAX_MESSAGE_SIZE = 8 << 20;

  private String node;
  private int device = DEFAULT_DEVICE;
  private long timeout = DEFAULT_TIMEOUT;
  private int maxMessageSize = DEFAULT_MAX_MESSAGE_SIZE;

  public DeviceClientOptions() {
  }

  public DeviceClientOptions(DeviceClientOptions other) {
    this.node = other.node;
    this.device = other.device;
    this.timeout = other.timeout;
    this.maxMessageSize = other.maxMessageSize;
  }

  public DeviceClientOptions(JsonObject json) {
    this();
    DeviceClientOptionsConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    DeviceClientOptionsConverter.toJson(this, json);
    return json;
  }

  /** Node word of the device's address; {@code null} means this node. */
  public String getNode() { return node; }
  public DeviceClientOptions setNode(String node) { this.node = node; return this; }

  /** Device index on that node. */
  public int getDevice() { return device; }
  public DeviceClientOptions setDevice(int device) { this.device = device; return this; }

  /** Request timeout in milliseconds; a request with no reply by then fails with TIMEOUT. */
  public long getTimeout() { return timeout; }
  public DeviceClientOptions setTimeout(long timeout) { this.timeout = timeout; return this; }

  /**
   * The most data bytes one event-bus message to a device on another node carries: an upload or
   * download larger than this, or than 1 MiB, streams over the node's bulk side channel instead; a
   * staged copy between devices goes in views of at most this size. At least 4 KiB.
   */
  public int getMaxMessageSize() { return maxMessageSize; }
  public DeviceClientOptions setMaxMessageSize(int maxMessageSize) {
    if (maxMessageSize < 4096) {
      throw new IllegalArgumentException("maxMessageSize must be at least 4096 bytes, got " + maxMessageSize);
    }
    this.maxMessageSize = maxMessageSize;
    return this;
  }
}
