package com.vertxcuda.kernel;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.kernel.impl.KernelClientImpl;
import io.vertx.codegen.annotations.GenIgnore;
import io.vertx.codegen.annotations.VertxGen;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.util.List;

/**
 * A typed client for one device's kernel verticle, usable from any node of the event bus. Futures
 * complete when the device has finished, or fail with a {@link com.vertxcuda.CudaException}. User
 * modules and NVRTC need the cuda backend (the host backend answers UNSUPPORTED); the built-ins run
 * on every backend.
 */
@VertxGen
public interface KernelClient {

  static KernelClient create(Vertx vertx) {
    return create(vertx, new DeviceClientOptions());
  }

  static KernelClient create(Vertx vertx, DeviceClientOptions options) {
    return new KernelClientImpl(vertx, options);
  }

  /** The kernel address this client talks to. */
  String address();

  /** Sends any request. */
  Future<KernelReply> execute(KernelRequest request);

  /** Loads a module from PTX text. */
  Future<ModuleHandle> loadPtx(String ptx);

  /** Compiles CUDA C with NVRTC for the device (or {@code arch}, if not null) and loads it. */
  Future<KernelReply> compile(String source, String arch, List<String> options);

  /** Launches {@code function} on grid × block threads (x, y, z each) with {@code args}. */
  @GenIgnore(GenIgnore.PERMITTED_TYPE)
  Future<Void> launch(ModuleHandle module, String function, int[] grid, int[] block, int sharedMemoryBytes,
                      KernelArg... args);

  /** Unloads a module. */
  Future<Void> unload(ModuleHandle module);

  /**
   * output[i] = value. The value must fit the output's dtype ({@link com.vertxcuda.DType#encode(double)},
   * the rule of every fill): a finite value that is infinite in F32 fails with BAD_REQUEST naming the range.
   */
  Future<BufferHandle> fill(BufferHandle output, double value);

  /** output[i] = factor · x[i]; the factor must fit the output's dtype, as a fill's value must. */
  Future<BufferHandle> scale(BufferHandle x, double factor, BufferHandle output);

  /** output[i] = x[i] + y[i]. */
  Future<BufferHandle> add(BufferHandle x, BufferHandle y, BufferHandle output);

  /** output[i] = x[i] converted to output's dtype (F32, F16, BF16). */
  Future<BufferHandle> convert(BufferHandle x, BufferHandle output);

  /** output[i] = x[i] · y[i]: F32, F64, or complex products of C64 or C128 elements. */
  Future<BufferHandle> multiply(BufferHandle x, BufferHandle y, BufferHandle output);
}
