package com.vertxcuda.library.rand;

import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.host.HostAccess;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.library.impl.EngineResult;
import com.vertxcuda.library.impl.HostResult;
import com.vertxcuda.rand.Distribution;
import com.vertxcuda.rand.RandRequest;
import com.vertxcuda.rand.RngType;

import java.nio.ByteBuffer;

/**
 * Random numbers on the host backend, computed on the stream's thread. Pseudo-random generators
 * produce one sequence of 32-bit words from {@code offset}; the distributions take words as cuRAND's
 * device functions do: a float uniform from one word ({@code w * 2^-32 + 2^-33}), a double uniform
 * from two, normals by Box-Muller in pairs, log-normals as exp of those, Poisson by inversion of one
 * uniform (a normal approximation above lambda 200). SOBOL32 fills each dimension's block with its
 * points from {@code offset}, normals by the inverse normal CDF.
 */
final class HostRandEngine implements RandEngine {

  private static final float TWO_POW_32_INV = 2.3283064e-10f;
  private static final double TWO_POW_32_INV_D = 2.3283064365386963e-10;
  private static final double TWO_POW_53_INV = 1.1102230246251565e-16;

  private final DeviceContext device;

  HostRandEngine(DeviceContext device) {
    this.device = device;
  }

  @Override
  public EngineResult enqueue(GpuStream stream, RandCall call) throws BackendException {
    RandRequest r = call.request();
    if (call.generator().isQuasi() && r.getDimensions() > Sobol32.MAX_DIMENSIONS) {
      throw BackendException.of(FailureCode.UNSUPPORTED, "the host backend's SOBOL32 has "
        + Sobol32.MAX_DIMENSIONS + " dimensions, asked " + r.getDimensions());
    }
    HostResult result = new HostResult();
    HostAccess.enqueue(device, stream, result.capture(() -> {
      run(call);
      return 0;
    }));
    return result;
  }

  @Override
  public void close(boolean poisoned) {
  }

  private static Bits pseudo(RngType type, long seed, long offset) {
    switch (type) {
      case PHILOX4_32_10: return new Philox4x32(seed, offset);
      case XORWOW: return new Xorwow(seed, offset);
      case MRG32K3A: return new Mrg32k3a(seed, offset);
      default: return new Mt19937(seed);
    }
  }

  private static void run(RandCall call) {
    RandRequest r = call.request();
    ByteBuffer out = HostAccess.bytes(call.output().memory(), call.output().byteOffset(),
      call.output().byteExtent());
    int length = Math.toIntExact(call.length());
    DType dtype = call.output().dtype();
    if (call.generator().isQuasi()) {
      int dims = r.getDimensions();
      int points = length / dims;
      for (int d = 0; d < dims; d++) {
        Bits bits = new Sobol32(d, r.getOffset());
        for (int i = 0; i < points; i++) {
          int at = d * points + i;
          int w = bits.next();
          double u = Bits.unsigned(w) * TWO_POW_32_INV_D + TWO_POW_32_INV_D / 2;
          switch (r.getDistribution()) {
            case UNIFORM:
              put(out, dtype, at, dtype == DType.F32 ? uniformFloat(w) : u);
              break;
            case NORMAL:
              put(out, dtype, at, r.getMean() + r.getStddev() * inverseNormal(u));
              break;
            case LOG_NORMAL:
              put(out, dtype, at, Math.exp(r.getMean() + r.getStddev() * inverseNormal(u)));
              break;
            default:
              out.putInt(at * 4, poisson(u, r.getLambda()));
          }
        }
      }
      return;
    }
    Bits bits = pseudo(call.generator(), r.getSeed(), r.getOffset());
    boolean f32 = dtype == DType.F32;
    switch (r.getDistribution()) {
      case UNIFORM:
        for (int i = 0; i < length; i++) {
          put(out, dtype, i, f32 ? uniformFloat(bits.next()) : uniformDouble(bits.next(), bits.next()));
        }
        break;
      case NORMAL:
      case LOG_NORMAL: {
        boolean log = r.getDistribution() == Distribution.LOG_NORMAL;
        for (int i = 0; i < length; i += 2) {
          double u;
          double v;
          if (f32) {
            u = uniformFloat(bits.next());
            v = uniformFloat(bits.next()) * 2 * Math.PI;
          } else {
            u = uniformDouble(bits.next(), bits.next());
            v = uniformDouble(bits.next(), bits.next()) * 2 * Math.PI;
          }
          double s = Math.sqrt(-2 * Math.log(u));
          double z0 = r.getMean() + r.getStddev() * Math.sin(v) * s;
          double z1 = r.getMean() + r.getStddev() * Math.cos(v) * s;
          put(out, dtype, i, log ? Math.exp(z0) : z0);
          put(out, dtype, i + 1, log ? Math.exp(z1) : z1);
        }
        break;
      }
      default:
        for (int i = 0; i < length; i++) {
          double u = Bits.unsigned(bits.next()) * TWO_POW_32_INV_D + TWO_POW_32_INV_D / 2;
          out.putInt(i * 4, poisson(u, r.getLambda()));
        }
    }
  }

  private static void put(ByteBuffer out, DType dtype, int at, double v) {
    if (dtype == DType.F32) {
      out.putFloat(at * 4, (float) v);
    } else {
      out.putDouble(at * 8, v);
    }
  }

  /** cuRAND's {@code _curand_uniform}: (0, 1] from one word, in float arithmetic. */
  static float uniformFloat(int w) {
    return Bits.unsigned(w) * TWO_POW_32_INV + TWO_POW_32_INV / 2.0f;
  }

  /** cuRAND's {@code _curand_uniform_double_hq}: 53 random bits from two words. */
  static double uniformDouble(int x, int y) {
    long z = Bits.unsigned(x) ^ (Bits.unsigned(y) << 21);
    return (z & ((1L << 53) - 1)) * TWO_POW_53_INV + TWO_POW_53_INV / 2.0;
  }

  /** Smallest k with P(X <= k) >= u; a rounded normal approximation for large lambda. */
  static int poisson(double u, double lambda) {
    if (lambda > 200) {
      double k = Math.floor(lambda + Math.sqrt(lambda) * inverseNormal(u) + 0.5);
      return (int) (long) Math.max(0, Math.min(k, 0xFFFF_FFFFL)); // U32: saturates at 2^32 - 1
    }
    double p = Math.exp(-lambda);
    double cdf = p;
    int k = 0;
    while (u > cdf && k < 10_000) {
      k++;
      p *= lambda / k;
      cdf += p;
      if (p == 0 && cdf < u) {
        break;
      }
    }
    return k;
  }

  /** The standard normal quantile (Acklam's rational approximation, relative error below 1.2e-9). */
  static double inverseNormal(double p) {
    double[] a = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
      -3.066479806614716e+01, 2.506628277459239e+00};
    double[] b = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
      -1.328068155288572e+01};
    double[] c = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
      4.374664141464968e+00, 2.938163982698783e+00};
    double[] d = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00};
    double low = 0.02425;
    if (p < low) {
      double q = Math.sqrt(-2 * Math.log(p));
      return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
        / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    if (p > 1 - low) {
      double q = Math.sqrt(-2 * Math.log(1 - p));
      return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
        / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    double q = p - 0.5;
    double r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
      / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
}
