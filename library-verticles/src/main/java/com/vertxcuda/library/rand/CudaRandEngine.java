package com.vertxcuda.library.rand;

import com.vertxcuda.DType;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.library.impl.CudaPointers;
import com.vertxcuda.library.impl.CudaStatus;
import com.vertxcuda.library.impl.EngineResult;
import com.vertxcuda.rand.Distribution;
import com.vertxcuda.rand.RandRequest;
import com.vertxcuda.rand.RngType;
import jcuda.driver.CUdeviceptr;
import jcuda.jcurand.JCurand;
import jcuda.jcurand.curandGenerator;
import jcuda.jcurand.curandRngType;
import jcuda.jcurand.curandStatus;
import jcuda.runtime.cudaStream_t;

import java.util.EnumMap;
import java.util.Map;

/**
 * cuRAND through JCurand: one host-API generator per kind, made on first use and bound to the
 * verticle's stream. Every request gets the numbers of its own seed and offset (and dimensions), so
 * requests are independent and repeatable. Setting a seed or offset makes cuRAND re-initialise the
 * generator on the next call, and that call waits for the stream (the host blocks for the previous
 * request's work and the GPU idles between requests). So a request that continues
 * exactly where the generator stands (same seed, its offset where the last F32 uniform request
 * ended) generates without setting either; any other request sets both. Only uniforms: XORWOW
 * normals at an offset are not the tail of a longer run, so a normal request always re-seeds.
 */
public final class CudaRandEngine implements RandEngine {

  private final CudaPointers pointers;
  private final cudaStream_t stream;
  private final Map<RngType, curandGenerator> generators = new EnumMap<>(RngType.class);
  /** Where each pseudo-random generator stands, where known: its seed and the offset of its next number. */
  private final Map<RngType, long[]> positions = new EnumMap<>(RngType.class);

  public CudaRandEngine(CudaPointers pointers, GpuStream stream) {
    this.pointers = pointers;
    this.stream = new cudaStream_t(pointers.stream(stream));
    JCurand.setExceptionsEnabled(false);
  }

  private static void check(int status, String call) throws BackendException {
    CudaStatus.CURAND.check(status, call);
  }

  private curandGenerator generator(RngType type) throws BackendException {
    curandGenerator g = generators.get(type);
    if (g != null && type == RngType.MTGP32) {
      // An MTGP32 generator keeps its state across a new seed (the same seed gives other numbers),
      // so each request gets a fresh one. Destroying frees device memory, which
      // waits for the work already queued.
      JCurand.curandDestroyGenerator(g);
      generators.remove(type);
      positions.remove(type);
      g = null;
    }
    if (g == null) {
      g = new curandGenerator();
      check(JCurand.curandCreateGenerator(g, kind(type)), "curandCreateGenerator");
      int set = JCurand.curandSetStream(g, stream);
      if (set != curandStatus.CURAND_STATUS_SUCCESS) {
        JCurand.curandDestroyGenerator(g);
        check(set, "curandSetStream");
      }
      generators.put(type, g);
    }
    return g;
  }

  @Override
  public EngineResult enqueue(GpuStream s, RandCall call) throws BackendException {
    RandRequest r = call.request();
    RngType type = call.generator();
    curandGenerator g = generator(type);
    long n = call.length();
    boolean d = call.output().dtype() == DType.F64;
    // Only F32 uniforms are known to advance the offset by exactly the numbers made (tested on a GPU).
    boolean tracked = !type.isQuasi() && type != RngType.MTGP32 && !d && call.distribution() == Distribution.UNIFORM;
    long[] at = positions.remove(type);
    boolean continues = tracked && at != null && at[0] == r.getSeed() && at[1] == r.getOffset();
    if (!continues) {
      if (type.isQuasi()) {
        check(JCurand.curandSetQuasiRandomGeneratorDimensions(g, r.getDimensions()),
          "curandSetQuasiRandomGeneratorDimensions");
      } else {
        check(JCurand.curandSetPseudoRandomGeneratorSeed(g, r.getSeed()), "curandSetPseudoRandomGeneratorSeed");
      }
      if (type != RngType.MTGP32) {
        check(JCurand.curandSetGeneratorOffset(g, r.getOffset()), "curandSetGeneratorOffset");
      }
    }
    CUdeviceptr out = pointers.pointer(call.output().memory(), call.output().byteOffset());
    switch (call.distribution()) {
      case UNIFORM:
        check(d ? JCurand.curandGenerateUniformDouble(g, out, n) : JCurand.curandGenerateUniform(g, out, n),
          "curandGenerateUniform");
        break;
      case NORMAL:
        check(d ? JCurand.curandGenerateNormalDouble(g, out, n, r.getMean(), r.getStddev())
          : JCurand.curandGenerateNormal(g, out, n, (float) r.getMean(), (float) r.getStddev()),
          "curandGenerateNormal");
        break;
      case LOG_NORMAL:
        check(d ? JCurand.curandGenerateLogNormalDouble(g, out, n, r.getMean(), r.getStddev())
          : JCurand.curandGenerateLogNormal(g, out, n, (float) r.getMean(), (float) r.getStddev()),
          "curandGenerateLogNormal");
        break;
      default:
        check(JCurand.curandGeneratePoisson(g, out, n, r.getLambda()), "curandGeneratePoisson");
    }
    if (tracked) {
      positions.put(type, new long[] {r.getSeed(), Math.addExact(r.getOffset(), n)});
    }
    return null;
  }

  @Override
  public void close(boolean poisoned) {
    if (!poisoned) {
      generators.values().forEach(JCurand::curandDestroyGenerator);
    }
    generators.clear();
    positions.clear();
  }

  private static int kind(RngType t) {
    switch (t) {
      case PHILOX4_32_10: return curandRngType.CURAND_RNG_PSEUDO_PHILOX4_32_10;
      case XORWOW: return curandRngType.CURAND_RNG_PSEUDO_XORWOW;
      case MRG32K3A: return curandRngType.CURAND_RNG_PSEUDO_MRG32K3A;
      case MTGP32: return curandRngType.CURAND_RNG_PSEUDO_MTGP32;
      default: return curandRngType.CURAND_RNG_QUASI_SOBOL32;
    }
  }
}
