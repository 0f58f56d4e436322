package com.vertxcuda;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/** A lifecycle event published on a device's events address. */
@DataObject
@JsonGen(publicConverter = false)
public class DeviceEvent {

  /** What happened. */
  public enum Type {
    /** A new context replaced a lost one; handles of the old generation are stale. */
    GENERATION_CHANGED,
    /** The device became ready. */
    READY,
    /**
     * The device cannot be recovered, or its node left the cluster (then the event is raised on each
     * node that watched it, since the departed node can say nothing).
     */
    LOST,
    /** The device was undeployed: it serves nothing until it is deployed again, at a new generation. */
    REMOVED
  }

  private Type type;
  private String node;
  private int device;
  private long oldGeneration;
  private long newGeneration;
  private String reason;

  public DeviceEvent() {
  }

  public DeviceEvent(Type type, String node, int device, long oldGeneration, long newGeneration, String reason) {
    this.type = type;
    this.node = node;
    this.device = device;
    this.oldGeneration = oldGeneration;
    this.newGeneration = newGeneration;
    this.reason = reason;
  }

  public DeviceEvent(JsonObject json) {
    DeviceEventConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    DeviceEventConverter.toJson(this, json);
    return json;
  }

  public Type getType() { return type; }
  public DeviceEvent setType(Type type) { this.type = type; return this; }

  public String getNode() { return node; }
  public DeviceEvent setNode(String node) { this.node = node; return this; }

  public int getDevice() { return device; }
  public DeviceEvent setDevice(int device) { this.device = device; return this; }

  /** The generation before the event. */
  public long getOldGeneration() { return oldGeneration; }
  public DeviceEvent setOldGeneration(long v) { this.oldGeneration = v; return this; }

  /** The generation after the event. */
  public long getNewGeneration() { return newGeneration; }
  public DeviceEvent setNewGeneration(long v) { this.newGeneration = v; return this; }

  /** Why: the sticky error's name, an exit code or signal, or another cause. */
  public String getReason() { return reason; }
  public DeviceEvent setReason(String reason) { this.reason = reason; return this; }
}
