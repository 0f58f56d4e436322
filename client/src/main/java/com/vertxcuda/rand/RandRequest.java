package com.vertxcuda.rand;

import com.vertxcuda.BufferHandle;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/**
 * Fill a buffer or view with random numbers. The request carries the whole generator state
 * (generator, seed, offset), so it is repeatable: the same request gives the same numbers on the
 * same backend. Replied with the output handle.
 */
@DataObject
@JsonGen(publicConverter = false)
public class RandRequest {

  public static final RngType DEFAULT_GENERATOR = RngType.PHILOX4_32_10;

  private RngType generator = DEFAULT_GENERATOR;
  private long seed;
  private long offset;
  private int dimensions = 1;
  private Distribution distribution = Distribution.UNIFORM;
  private double mean;
  private double stddev = 1;
  private double lambda = 1;
  private BufferHandle output;

  public RandRequest() {
  }

  public RandRequest(JsonObject json) {
    RandRequestConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    RandRequestConverter.toJson(this, json);
    return json;
  }

  /** The generator. */
  public RngType getGenerator() { return generator; }
  public RandRequest setGenerator(RngType generator) { this.generator = generator; return this; }

  /** Seed of a pseudo-random generator (ignored by SOBOL32). */
  public long getSeed() { return seed; }
  public RandRequest setSeed(long seed) { this.seed = seed; return this; }

  /** Position in the generator's sequence to start from (MTGP32 takes only 0). */
  public long getOffset() { return offset; }
  public RandRequest setOffset(long offset) { this.offset = offset; return this; }

  /** Dimensions of a quasi-random generator; the output holds length / dimensions points per dimension, dimension after dimension. */
  public int getDimensions() { return dimensions; }
  public RandRequest setDimensions(int dimensions) { this.dimensions = dimensions; return this; }

  /** The distribution. */
  public Distribution getDistribution() { return distribution; }
  public RandRequest setDistribution(Distribution distribution) { this.distribution = distribution; return this; }

  /** Mean of NORMAL and LOG_NORMAL (of the underlying normal). */
  public double getMean() { return mean; }
  public RandRequest setMean(double mean) { this.mean = mean; return this; }

  /** Standard deviation of NORMAL and LOG_NORMAL (of the underlying normal), > 0. */
  public double getStddev() { return stddev; }
  public RandRequest setStddev(double stddev) { this.stddev = stddev; return this; }

  /** Mean of POISSON, > 0. */
  public double getLambda() { return lambda; }
  public RandRequest setLambda(double lambda) { this.lambda = lambda; return this; }

  /** The buffer or view filled. */
  public BufferHandle getOutput() { return output; }
  public RandRequest setOutput(BufferHandle output) { this.output = output; return this; }
}
