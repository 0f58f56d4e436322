package com.vertxcuda.kernel;

import com.vertxcuda.BufferHandle;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/** What a kernel request produced. */
@DataObject
@JsonGen(publicConverter = false)
public class KernelReply {

  private ModuleHandle module;
  private BufferHandle output;
  private String log;
  private boolean cached;

  public KernelReply() {
  }

  public KernelReply(JsonObject json) {
    KernelReplyConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    KernelReplyConverter.toJson(this, json);
    return json;
  }

  /** The loaded module (LOAD_PTX, LOAD_IMAGE, COMPILE). */
  public ModuleHandle getModule() { return module; }
  public KernelReply setModule(ModuleHandle module) { this.module = module; return this; }

  /** The buffer written (built-ins). */
  public BufferHandle getOutput() { return output; }
  public KernelReply setOutput(BufferHandle output) { this.output = output; return this; }

  /** The compiler's log (COMPILE). */
  public String getLog() { return log; }
  public KernelReply setLog(String log) { this.log = log; return this; }

  /** Whether COMPILE found the PTX in its cache instead of compiling. */
  public boolean isCached() { return cached; }
  public KernelReply setCached(boolean cached) { this.cached = cached; return this; }
}
