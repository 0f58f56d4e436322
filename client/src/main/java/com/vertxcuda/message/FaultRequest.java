package com.vertxcuda.message;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/**
 * Injects a fault into a device's context, for tests and drills. Accepted only by devices deployed
 * with fault injection enabled on the host backend; others answer UNSUPPORTED.
 */
@DataObject
@JsonGen(publicConverter = false)
public class FaultRequest {

  /** Which fault. */
  public enum Kind {
    /** Poison the context as a sticky CUDA error would (illegal address). */
    POISON,
    /** Make the next allocation fail with OUT_OF_MEMORY. */
    FAIL_NEXT_ALLOCATION,
    /** Make the next device operation fail as a library call would, for that request only (LIBRARY_ERROR). */
    FAIL_NEXT_OPERATION,
    /** Stop the context from answering anything (a hung device). */
    STALL
  }

  private Kind kind;

  public FaultRequest() {
  }

  public FaultRequest(Kind kind) {
    this.kind = kind;
  }

  public FaultRequest(JsonObject json) {
    FaultRequestConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    FaultRequestConverter.toJson(this, json);
    return json;
  }

  public Kind getKind() { return kind; }
  public FaultRequest setKind(Kind kind) { this.kind = kind; return this; }
}
