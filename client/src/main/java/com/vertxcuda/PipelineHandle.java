package com.vertxcuda;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.core.json.JsonObject;

import java.security.SecureRandom;
import java.util.Objects;

/**
 * A recorded pipeline on one device ({@link DeviceClient#record()}): the device that holds it, the
 * context generation that recorded it (a rebuilt context forgets it: replaying it then fails with
 * STALE_HANDLE), its id, how many steps it has, and whether the device captured it as one CUDA graph
 * ({@code captured}) or replays it step by step (the host backend, or a cuda device whose capture of
 * these steps failed), and an unguessable 128-bit token: the device replays or releases a pipeline
 * only for a handle that carries it (FORBIDDEN otherwise), as for a {@link BufferHandle}. Immutable;
 * equal when node, device, generation, id and token are.
 */
@DataObject
public final class PipelineHandle {

  private final String node;
  private final int device;
  private final long generation;
  private final long id;
  private final int steps;
  private final boolean captured;
  private final long tokenHigh;
  private final long tokenLow;

  private static final SecureRandom RANDOM = new SecureRandom();

  public PipelineHandle(String node, int device, long generation, long id, int steps, boolean captured,
                        long tokenHigh, long tokenLow) {
    this.node = node;
    this.device = device;
    this.generation = generation;
    this.id = id;
    this.steps = steps;
    this.captured = captured;
    this.tokenHigh = tokenHigh;
    this.tokenLow = tokenLow;
  }

  /** A handle to a new pipeline with a fresh random token. */
  public static PipelineHandle issue(String node, int device, long generation, long id, int steps, boolean captured) {
    return new PipelineHandle(node, device, generation, id, steps, captured, RANDOM.nextLong(), RANDOM.nextLong());
  }

  public PipelineHandle(JsonObject json) {
    this(json.getString("node"), json.getInteger("device", 0), json.getLong("generation", 0L),
      json.getLong("id", 0L), json.getInteger("steps", 0), json.getBoolean("captured", false),
      tokenPart(json, 0), tokenPart(json, 16));
  }

  // Half of the 32 hex digits of "token" (none: 0, and the device answers FORBIDDEN).
  private static long tokenPart(JsonObject json, int from) {
    String token = json.getString("token");
    if (token == null) {
      return 0;
    }
    if (token.length() != 32) {
      throw new IllegalArgumentException("a pipeline token is 32 hex digits, not " + token.length() + " characters");
    }
    return Long.parseUnsignedLong(token.substring(from, from + 16), 16);
  }

  public JsonObject toJson() {
    return new JsonObject().put("node", node).put("device", device).put("generation", generation).put("id", id)
      .put("steps", steps).put("captured", captured).put("token", String.format("%016x%016x", tokenHigh, tokenLow));
  }

  public String node() { return node; }
  public int device() { return device; }
  public long generation() { return generation; }
  public long id() { return id; }
  public int steps() { return steps; }
  /** Whether replays launch one CUDA graph (true) or run the steps one by one (false). */
  public boolean captured() { return captured; }
  public long tokenHigh() { return tokenHigh; }
  public long tokenLow() { return tokenLow; }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof PipelineHandle)) {
      return false;
    }
    PipelineHandle p = (PipelineHandle) o;
    return device == p.device && generation == p.generation && id == p.id && Objects.equals(node, p.node)
      && tokenHigh == p.tokenHigh && tokenLow == p.tokenLow;
  }

  @Override
  public int hashCode() {
    return Objects.hash(node, device, generation, id, tokenHigh, tokenLow);
  }

  @Override
  public String toString() {
    return "pipeline #" + id + " of " + node + "/" + device + " generation " + generation + " (" + steps + " steps, "
      + (captured ? "graph" : "step by step") + ")";
  }
}
