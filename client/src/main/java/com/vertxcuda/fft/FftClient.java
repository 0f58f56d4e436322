package com.vertxcuda.fft;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.fft.impl.FftClientImpl;
import io.vertx.codegen.annotations.VertxGen;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.util.List;

/**
 * A typed client for one device's FFT verticle. Futures complete when the device has finished, or
 * fail with a {@link com.vertxcuda.CudaException} (BAD_REQUEST names the offending field).
 */
@VertxGen
public interface FftClient {

  static FftClient create(Vertx vertx) {
    return create(vertx, new DeviceClientOptions());
  }

  static FftClient create(Vertx vertx, DeviceClientOptions options) {
    return new FftClientImpl(vertx, options);
  }

  /** The FFT address this client talks to. */
  String address();

  /** Sends any request. */
  Future<FftReply> execute(FftRequest request);

  /** {@code batch} contiguous transforms of logical size {@code n} (slowest first); replies the output. */
  Future<BufferHandle> transform(FftType type, FftDirection direction, List<Integer> n, int batch,
                                 BufferHandle input, BufferHandle output);
}
