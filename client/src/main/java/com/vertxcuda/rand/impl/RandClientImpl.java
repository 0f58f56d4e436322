package com.vertxcuda.rand.impl;

import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.Library;
import com.vertxcuda.rand.Distribution;
import com.vertxcuda.rand.RandClient;
import com.vertxcuda.rand.RandRequest;
import com.vertxcuda.rand.RngType;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

public final class RandClientImpl implements RandClient {

  private final RequestSender sender;

  public RandClientImpl(Vertx vertx, DeviceClientOptions options) {
    this.sender = RequestSender.of(vertx, options, Library.RAND);
  }

  @Override
  public String address() {
    return sender.address();
  }

  @Override
  public Future<BufferHandle> generate(RandRequest request) {
    return sender.request(request);
  }

  private static RandRequest request(RngType generator, long seed, Distribution d, BufferHandle output) {
    return new RandRequest().setGenerator(generator).setSeed(seed).setDistribution(d).setOutput(output);
  }

  @Override
  public Future<BufferHandle> uniform(RngType generator, long seed, BufferHandle output) {
    return generate(request(generator, seed, Distribution.UNIFORM, output));
  }

  @Override
  public Future<BufferHandle> normal(RngType generator, long seed, double mean, double stddev, BufferHandle output) {
    return generate(request(generator, seed, Distribution.NORMAL, output).setMean(mean).setStddev(stddev));
  }

  @Override
  public Future<BufferHandle> logNormal(RngType generator, long seed, double mean, double stddev,
                                        BufferHandle output) {
    return generate(request(generator, seed, Distribution.LOG_NORMAL, output).setMean(mean).setStddev(stddev));
  }

  @Override
  public Future<BufferHandle> poisson(RngType generator, long seed, double lambda, BufferHandle output) {
    return generate(request(generator, seed, Distribution.POISSON, output).setLambda(lambda));
  }
}
