package com.vertxcuda.kernel;

import com.vertxcuda.BufferHandle;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/** One request to a device's kernel verticle; {@link #getOp()} says which fields it uses. */
@DataObject
@JsonGen(publicConverter = false)
public class KernelRequest {

  private KernelOp op;
  private String ptx;
  private Buffer image;
  private String source;
  private String name;
  private String arch;
  private List<String> compileOptions = new ArrayList<>();
  private ModuleHandle module;
  private String function;
  private List<Integer> grid = new ArrayList<>(List.of(1, 1, 1));
  private List<Integer> block = new ArrayList<>(List.of(1, 1, 1));
  private int sharedMemoryBytes;
  private List<KernelArg> args = new ArrayList<>();
  private BufferHandle x;
  private BufferHandle y;
  private BufferHandle output;
  private double scalar;

  public KernelRequest() {
  }

  public KernelRequest(KernelOp op) {
    this.op = op;
  }

  public KernelRequest(JsonObject json) {
    KernelRequestConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    KernelRequestConverter.toJson(this, json);
    return json;
  }

  public KernelOp getOp() { return op; }
  public KernelRequest setOp(KernelOp op) { this.op = op; return this; }

  /** PTX text (LOAD_PTX). */
  public String getPtx() { return ptx; }
  public KernelRequest setPtx(String ptx) { this.ptx = ptx; return this; }

  /** A cubin or fatbin image (LOAD_IMAGE). */
  public Buffer getImage() { return image; }
  public KernelRequest setImage(Buffer image) { this.image = image; return this; }

  /** CUDA C source (COMPILE); kernels must be {@code extern "C"} to be found by name. */
  public String getSource() { return source; }
  public KernelRequest setSource(String source) { this.source = source; return this; }

  /** The program's name in compiler messages (COMPILE). */
  public String getName() { return name; }
  public KernelRequest setName(String name) { this.name = name; return this; }

  /** Virtual architecture such as "compute_90" (COMPILE); default: the device's own. */
  public String getArch() { return arch; }
  public KernelRequest setArch(String arch) { this.arch = arch; return this; }

  /** Further NVRTC options such as "-DN=4" or "--use_fast_math" (COMPILE). */
  public List<String> getCompileOptions() { return compileOptions; }
  public KernelRequest setCompileOptions(List<String> v) { this.compileOptions = v; return this; }

  /** The module (LAUNCH, UNLOAD). */
  public ModuleHandle getModule() { return module; }
  public KernelRequest setModule(ModuleHandle module) { this.module = module; return this; }

  /** The function's name in the module (LAUNCH). */
  public String getFunction() { return function; }
  public KernelRequest setFunction(String function) { this.function = function; return this; }

  /** Blocks in x, y, z (LAUNCH). */
  public List<Integer> getGrid() { return grid; }
  public KernelRequest setGrid(List<Integer> grid) { this.grid = grid; return this; }

  /** Threads per block in x, y, z (LAUNCH). */
  public List<Integer> getBlock() { return block; }
  public KernelRequest setBlock(List<Integer> block) { this.block = block; return this; }

  /** Dynamic shared memory per block in bytes (LAUNCH). */
  public int getSharedMemoryBytes() { return sharedMemoryBytes; }
  public KernelRequest setSharedMemoryBytes(int v) { this.sharedMemoryBytes = v; return this; }

  /** Arguments in the order of the kernel's parameters (LAUNCH). */
  public List<KernelArg> getArgs() { return args; }
  public KernelRequest setArgs(List<KernelArg> args) { this.args = args; return this; }

  /** First input (SCALE, ADD, CONVERT, MULTIPLY). */
  public BufferHandle getX() { return x; }
  public KernelRequest setX(BufferHandle x) { this.x = x; return this; }

  /** Second input (ADD, MULTIPLY). */
  public BufferHandle getY() { return y; }
  public KernelRequest setY(BufferHandle y) { this.y = y; return this; }

  /** The buffer or view written (FILL, SCALE, ADD, CONVERT, MULTIPLY). */
  public BufferHandle getOutput() { return output; }
  public KernelRequest setOutput(BufferHandle output) { this.output = output; return this; }

  /** The value (FILL) or factor (SCALE). */
  public double getScalar() { return scalar; }
  public KernelRequest setScalar(double scalar) { this.scalar = scalar; return this; }
}
