package com.vertxcuda.kernel;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.core.json.JsonObject;

import java.security.SecureRandom;
import java.util.Objects;

/**
 * An immutable reference to a loaded module: node, device, generation, module id and an
 * unguessable 128-bit token. Validated on every use like a buffer handle: an earlier generation
 * answers STALE_HANDLE, an unknown or unloaded id NOT_FOUND, a wrong token FORBIDDEN.
 */
@DataObject
public final class ModuleHandle {

  private static final SecureRandom RANDOM = new SecureRandom();

  private final String node;
  private final int device;
  private final long generation;
  private final long id;
  private final long tokenHigh;
  private final long tokenLow;

  public ModuleHandle(String node, int device, long generation, long id, long tokenHigh, long tokenLow) {
    this.node = Objects.requireNonNull(node, "node");
    this.device = device;
    this.generation = generation;
    this.id = id;
    this.tokenHigh = tokenHigh;
    this.tokenLow = tokenLow;
  }

  /** A new handle with a fresh random token. */
  public static ModuleHandle issue(String node, int device, long generation, long id) {
    return new ModuleHandle(node, device, generation, id, RANDOM.nextLong(), RANDOM.nextLong());
  }

  public ModuleHandle(JsonObject json) {
    this(json.getString("node"), json.getInteger("device", 0), json.getLong("generation", 0L),
      json.getLong("id", 0L), Long.parseUnsignedLong(json.getString("token").substring(0, 16), 16),
      Long.parseUnsignedLong(json.getString("token").substring(16), 16));
  }

  public JsonObject toJson() {
    return new JsonObject().put("node", node).put("device", device).put("generation", generation).put("id", id)
      .put("token", String.format("%016x%016x", tokenHigh, tokenLow));
  }

  public String node() { return node; }
  public int device() { return device; }
  public long generation() { return generation; }
  public long id() { return id; }
  public long tokenHigh() { return tokenHigh; }
  public long tokenLow() { return tokenLow; }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof ModuleHandle)) {
      return false;
    }
    ModuleHandle m = (ModuleHandle) o;
    return device == m.device && generation == m.generation && id == m.id && tokenHigh == m.tokenHigh
      && tokenLow == m.tokenLow && node.equals(m.node);
  }

  @Override
  public int hashCode() {
    return Objects.hash(node, device, generation, id, tokenHigh, tokenLow);
  }

  @Override
  public String toString() {
    return "ModuleHandle[" + node + "/" + device + " g" + generation + " #" + id + "]";
  }
}
