package com.vertxcuda;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.core.json.JsonObject;

import java.util.Objects;

/**
 * A recorded pipeline on one device ({@link DeviceClient#record()}): the device that holds it, the
 * context generation that recorded it (a rebuilt context forgets it: replaying it then fails with
 * STALE_HANDLE), its id, how many steps it has, and whether the device captured it as one CUDA graph
 * ({@code captured}) or replays it step by step (the host backend, or a cuda device whose capture of
 * these steps failed). Immutable; equal when node, device, generation and id are.
 */
@DataObject
public final class PipelineHandle {

  private final String node;
  private final int device;
  private final long generation;
  private final long id;
  private final int steps;
  private final boolean captured;

  public PipelineHandle(String node, int device, long generation, long id, int steps, boolean captured) {
    this.node = node;
    this.device = device;
    this.generation = generation;
    this.id = id;
    this.steps = steps;
    this.captured = captured;
  }

  public PipelineHandle(JsonObject json) {
    this(json.getString("node"), json.getInteger("device", 0), json.getLong("generation", 0L),
      json.getLong("id", 0L), json.getInteger("steps", 0), json.getBoolean("captured", false));
  }

  public JsonObject toJson() {
    return new JsonObject().put("node", node).put("device", device).put("generation", generation).put("id", id)
      .put("steps", steps).put("captured", captured);
  }

  public String node() { return node; }
  public int device() { return device; }
  public long generation() { return generation; }
  public long id() { return id; }
  public int steps() { return steps; }
  /** Whether replays launch one CUDA graph (true) or run the steps one by one (false). */
  public boolean captured() { return captured; }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof PipelineHandle)) {
      return false;
    }
    PipelineHandle p = (PipelineHandle) o;
    return device == p.device && generation == p.generation && id == p.id && Objects.equals(node, p.node);
  }

  @Override
  public int hashCode() {
    return Objects.hash(node, device, generation, id);
  }

  @Override
  public String toString() {
    return "pipeline #" + id + " of " + node + "/" + device + " generation " + generation + " (" + steps + " steps, "
      + (captured ? "graph" : "step by step") + ")";
  }
}
