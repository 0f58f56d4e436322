package com.vertxcuda.fft.impl;

import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.Library;
import com.vertxcuda.fft.FftClient;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftReply;
import com.vertxcuda.fft.FftRequest;
import com.vertxcuda.fft.FftType;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.util.List;

public final class FftClientImpl implements FftClient {

  private final RequestSender sender;

  public FftClientImpl(Vertx vertx, DeviceClientOptions options) {
    this.sender = RequestSender.of(vertx, options, Library.FFT);
  }

  @Override
  public String address() {
    return sender.address();
  }

  @Override
  public Future<FftReply> execute(FftRequest request) {
    return sender.request(request);
  }

  @Override
  public Future<BufferHandle> transform(FftType type, FftDirection direction, List<Integer> n, int batch,
                                        BufferHandle input, BufferHandle output) {
    return execute(new FftRequest().setType(type).setDirection(direction).setN(n).setBatch(batch).setInput(input)
      .setOutput(output)).map(FftReply::getOutput);
  }
}
