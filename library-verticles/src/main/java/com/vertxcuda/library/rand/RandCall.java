package com.vertxcuda.library.rand;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.device.spi.DeviceBuffer;
import com.vertxcuda.device.spi.DeviceMemory;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.library.impl.Operand;
import com.vertxcuda.rand.Distribution;
import com.vertxcuda.rand.RandRequest;
import com.vertxcuda.rand.RngType;

import static com.vertxcuda.library.impl.RequestChecks.bad;
import static com.vertxcuda.library.impl.RequestChecks.require;

/** A {@link RandRequest} that passed every check, with its output resolved. */
public final class RandCall {

  /** Most dimensions cuRAND's Sobol generators take. */
  public static final int MAX_DIMENSIONS = 20_000;

  private final RandRequest request;
  private final Operand output;

  private RandCall(RandRequest request, Operand output) {
    this.request = request;
    this.output = output;
  }

  public RandRequest request() { return request; }
  public RngType generator() { return request.getGenerator(); }
  public Distribution distribution() { return request.getDistribution(); }
  public Operand output() { return output; }
  /** Numbers to generate. */
  public long length() { return output.extent(); }

  /**
   * This call with its numbers written from the start of {@code memory} (as many bytes as the
   * output's range) instead of into the output: a recorded step's numbers, generated once.
   */
  RandCall into(DeviceMemory memory) {
    BufferHandle h = output.handle();
    BufferHandle fromStart = new BufferHandle(h.node(), h.device(), h.generation(), h.id(), h.dtype(), h.length(),
      h.tokenHigh(), h.tokenLow(), 0, h.length());
    long bytes = output.byteExtent();
    DeviceBuffer numbers = new DeviceBuffer() {
      @Override public BufferHandle handle() { return fromStart; }
      @Override public DeviceMemory memory() { return memory; }
      @Override public long bytes() { return bytes; }
    };
    return new RandCall(request, new Operand(numbers, fromStart, output.extent()));
  }

  /** Validates {@code r} against the buffers of {@code table}'s context; BAD_REQUEST names the field. */
  public static RandCall of(RandRequest r, LibraryContext table) {
    RngType gen = r.getGenerator();
    Distribution d = r.getDistribution();
    if (gen == null) {
      throw bad("generator is missing");
    }
    if (d == null) {
      throw bad("distribution is missing");
    }
    DeviceBuffer a = d == Distribution.POISSON
      ? table.resolve(r.getOutput(), "output", DType.U32)
      : table.resolve(r.getOutput(), "output", DType.F32, DType.F64);
    long length = r.getOutput().length();
    require(r.getOffset() >= 0, () -> "offset must be >= 0, got " + r.getOffset());
    require(r.getOffset() <= Long.MAX_VALUE - length, () -> "offset " + r.getOffset() + " plus the output length "
      + length + " passes the generator's last position (2^63 - 1)");
    require(gen != RngType.MTGP32 || r.getOffset() == 0, () -> "offset must be 0 for MTGP32 (cuRAND cannot skip it), got "
      + r.getOffset());
    if (gen.isQuasi()) {
      require(r.getDimensions() >= 1 && r.getDimensions() <= MAX_DIMENSIONS, () -> "dimensions must be in [1, "
        + MAX_DIMENSIONS + "], got " + r.getDimensions());
      require(length % r.getDimensions() == 0, () -> "output length " + length + " is not a multiple of dimensions "
        + r.getDimensions());
    } else {
      require(r.getDimensions() == 1, () -> "dimensions applies to SOBOL32 only; " + gen + " takes 1, got "
        + r.getDimensions());
    }
    if (d == Distribution.NORMAL || d == Distribution.LOG_NORMAL) {
      require(r.getStddev() > 0 && Double.isFinite(r.getStddev()), () -> "stddev must be > 0, got " + r.getStddev());
      require(Double.isFinite(r.getMean()), () -> "mean must be finite, got " + r.getMean());
      require(gen.isQuasi() || length % 2 == 0, () -> "output length must be even for " + d + " with " + gen
        + " (cuRAND makes normals in pairs), got " + length);
    }
    if (d == Distribution.POISSON) {
      require(r.getLambda() > 0 && Double.isFinite(r.getLambda()), () -> "lambda must be > 0, got " + r.getLambda());
    }
    return new RandCall(r, new Operand(a, r.getOutput(), length));
  }
}
