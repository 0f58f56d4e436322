package com.vertxcuda.rand;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.rand.impl.RandClientImpl;
import io.vertx.codegen.annotations.VertxGen;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

/**
 * A typed client for one device's RAND verticle. Futures complete with the output handle once the
 * device has written it, or fail with a {@link com.vertxcuda.CudaException}.
 */
@VertxGen
public interface RandClient {

  static RandClient create(Vertx vertx) {
    return create(vertx, new DeviceClientOptions());
  }

  static RandClient create(Vertx vertx, DeviceClientOptions options) {
    return new RandClientImpl(vertx, options);
  }

  /** The RAND address this client talks to. */
  String address();

  /** Sends any request. */
  Future<BufferHandle> generate(RandRequest request);

  /** Uniform numbers on (0, 1] into an F32 or F64 buffer. */
  Future<BufferHandle> uniform(RngType generator, long seed, BufferHandle output);

  /** Normal numbers into an F32 or F64 buffer (even length for pseudo-random generators). */
  Future<BufferHandle> normal(RngType generator, long seed, double mean, double stddev, BufferHandle output);

  /** Log-normal numbers into an F32 or F64 buffer (even length for pseudo-random generators). */
  Future<BufferHandle> logNormal(RngType generator, long seed, double mean, double stddev, BufferHandle output);

  /** Poisson counts into a U32 buffer. */
  Future<BufferHandle> poisson(RngType generator, long seed, double lambda, BufferHandle output);
}
