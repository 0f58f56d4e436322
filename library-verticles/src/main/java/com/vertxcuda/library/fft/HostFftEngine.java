package com.vertxcuda.library.fft;

import com.vertxcuda.device.host.HostAccess;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.library.impl.EngineResult;
import com.vertxcuda.library.impl.HostResult;
import org.jtransforms.fft.DoubleFFT_1D;
import org.jtransforms.fft.DoubleFFT_2D;
import org.jtransforms.fft.DoubleFFT_3D;
import org.jtransforms.fft.FloatFFT_1D;
import org.jtransforms.fft.FloatFFT_2D;
import org.jtransforms.fft.FloatFFT_3D;
import pl.edu.icm.jlargearrays.ConcurrencyUtils;

import static com.vertxcuda.library.impl.HostOperands.read;
import static com.vertxcuda.library.impl.HostOperands.write;

/**
 * FFTs on the host backend through JTransforms (float transforms for C2C/R2C/C2R, double for the
 * rest), computed on the stream's thread. Each transform runs as a full complex transform of the
 * logical size: real input enters with zero imaginary parts, R2C keeps the non-redundant half, and
 * C2R input is completed by Hermitian symmetry, then the real part is kept (what cuFFT computes for
 * Hermitian input). Inverse transforms are unnormalised, as in cuFFT.
 */
final class HostFftEngine implements FftEngine {

  private final DeviceContext device;

  HostFftEngine(DeviceContext device) {
    this.device = device;
  }

  /**
   * A JTransforms transform of the logical size. Its bytes are its arrays and the heap one
   * transform with it allocates: counted with the plan, that working set is reserved before any
   * transform runs, and only one runs at a time on the stream's thread.
   */
  private static final class HostPlan implements Plan {
    final FftPlanKey key;
    final Object fft;
    final long bytes;

    HostPlan(FftPlanKey key, Object fft) {
      this.key = key;
      this.fft = fft;
      this.bytes = HostPlanBytes.of(fft) + transformBytes(key);
    }

    @Override
    public long bytes() {
      return bytes;
    }
  }

  @Override
  public Plan plan(FftPlanKey key) {
    // Size-1 dimensions change nothing (JTransforms refuses them in 2D and 3D): plan without them.
    int[] n = java.util.Arrays.stream(key.dims()).filter(s -> s > 1).toArray();
    boolean d = key.type().isDoublePrecision();
    Object fft;
    switch (n.length) {
      case 0:
        fft = null; // a transform of one element is that element
        break;
      case 1:
        fft = d ? new DoubleFFT_1D(n[0]) : new FloatFFT_1D(n[0]);
        break;
      case 2:
        fft = d ? new DoubleFFT_2D(n[0], n[1]) : new FloatFFT_2D(n[0], n[1]);
        break;
      default:
        fft = d ? new DoubleFFT_3D(n[0], n[1], n[2]) : new FloatFFT_3D(n[0], n[1], n[2]);
    }
    return new HostPlan(key, fft);
  }

  /**
   * What JTransforms allocates for a plan, from its algorithm per dimension (a 2D or 3D plan holds a
   * 1D plan per dimension): a power of two keeps twiddles and bit-reversal tables (under 2n values),
   * sizes of 2, 3, 4 and 5 keep two mixed-radix tables (6n values), any other size Bluestein's chirp
   * and its transform at the next power of two m ≥ 2n - 1 (2m each) with that size's tables (m);
   * and what one transform with it allocates ({@link #transformBytes}).
   */
  @Override
  public long estimatedBytes(FftPlanKey key) {
    return planBytes(key) + transformBytes(key);
  }

  private static long planBytes(FftPlanKey key) {
    long value = key.type().isDoublePrecision() ? 8 : 4;
    long bytes = 0;
    for (int s : key.dims()) {
      if (s <= 1) {
        continue;
      }
      long n = s;
      long values;
      if (Long.bitCount(n) == 1) {
        values = 2 * n;
      } else if (smooth(n)) {
        values = 6 * n + 30;
      } else {
        long m = Long.highestOneBit(2 * n - 1) << 1;
        values = 5 * m;
      }
      bytes += values * value + 4 * (2 + (long) Math.ceil(Math.sqrt(2 * n)));
    }
    return bytes;
  }

  /**
   * The heap one transform allocates beside its plan ({@link #run}): the input and the output read as
   * doubles, every batch's spectrum, a float copy of one spectrum in single precision, and
   * JTransforms' scratch per dimension: Bluestein's padded transform (2m values), a mixed-radix
   * size's copy (2n), none for a power of two, and in 2D and 3D a column gathered (8n) by each of its
   * threads, which transform rows and columns at once.
   */
  static long transformBytes(FftPlanKey key) {
    FftType type = key.type();
    int[] n = key.dims();
    int rank = n.length;
    long total = 1;
    for (int s : n) {
      total = Math.multiplyExact(total, s);
    }
    int[] half = n.clone();
    half[rank - 1] = n[rank - 1] / 2 + 1;
    long in = key.input().extent(type.isComplexToReal() ? half : n, key.batch()) * (type.isComplexInput() ? 2 : 1);
    long out = key.output().extent(type.isRealToComplex() ? half : n, key.batch()) * (type.isComplexOutput() ? 2 : 1);
    long doubles = in + out + key.batch() * 2 * total;
    long floats = type.isDoublePrecision() ? 0 : 2 * total;
    long planned = java.util.Arrays.stream(n).filter(s -> s > 1).count();
    long scratch = 0;
    for (int s : n) {
      if (s <= 1) {
        continue;
      }
      long size = s;
      if (Long.bitCount(size) != 1) {
        scratch += smooth(size) ? 2 * size : 2 * (Long.highestOneBit(2 * size - 1) << 1);
      }
      if (planned > 1) {
        scratch += 8 * size;
      }
    }
    if (planned > 1) {
      scratch *= ConcurrencyUtils.getNumberOfThreads();
    }
    return 8 * doubles + 4 * floats + (type.isDoublePrecision() ? 8 : 4) * scratch;
  }

  private static boolean smooth(long n) {
    for (long f : new long[] {2, 3, 5}) {
      while (n % f == 0) {
        n /= f;
      }
    }
    return n == 1;
  }

  @Override
  public void destroy(Plan plan, boolean poisoned) {
  }

  @Override
  public EngineResult enqueue(GpuStream stream, Plan plan, FftCall call) throws BackendException {
    HostResult result = new HostResult();
    HostAccess.enqueue(device, stream, result.capture(() -> {
      run((HostPlan) plan, call);
      return 0;
    }));
    return result;
  }

  private static void run(HostPlan plan, FftCall call) {
    FftPlanKey key = call.key();
    FftType type = key.type();
    int[] n = key.dims();
    int rank = n.length;
    int total = 1;
    for (int s : n) {
      total *= s;
    }
    int[] half = n.clone();
    half[rank - 1] = n[rank - 1] / 2 + 1;
    double[] in = read(call.input());
    // Every batch is gathered before anything is written, so in-place transforms read the input intact.
    double[][] spectra = new double[key.batch()][];
    for (int b = 0; b < key.batch(); b++) {
      double[] z = new double[2 * total];
      int[] idx = new int[rank];
      for (int i = 0; i < total; i++) {
        unravel(i, n, idx);
        if (type.isComplexInput() && type.isComplexOutput()) {
          long at = 2 * key.input().offset(idx, b);
          z[2 * i] = in[(int) at];
          z[2 * i + 1] = in[(int) at + 1];
        } else if (type.isRealToComplex()) {
          z[2 * i] = in[(int) key.input().offset(idx, b)];
        } else {
          hermitian(in, key.input(), b, n, idx, z, i);
        }
      }
      transform(plan.fft, z, call.direction() == FftDirection.FORWARD);
      spectra[b] = z;
    }
    double[] out = read(call.output());
    for (int b = 0; b < key.batch(); b++) {
      double[] z = spectra[b];
      int[] idx = new int[rank];
      for (int i = 0; i < total; i++) {
        unravel(i, n, idx);
        if (type.isComplexToReal()) {
          out[(int) key.output().offset(idx, b)] = z[2 * i];
        } else if (!type.isRealToComplex() || idx[rank - 1] < half[rank - 1]) {
          int at = (int) (2 * key.output().offset(idx, b));
          out[at] = z[2 * i];
          out[at + 1] = z[2 * i + 1];
        }
      }
    }
    write(call.output(), out);
  }

  // Element idx of the full spectrum from the stored half: X[k] for k_last <= n/2, else conj X[-k].
  private static void hermitian(double[] in, FftLayout layout, int b, int[] n, int[] idx, double[] z, int i) {
    int rank = n.length;
    int last = idx[rank - 1];
    double sign = 1;
    int[] at = idx;
    if (last > n[rank - 1] / 2) {
      at = new int[rank];
      for (int d = 0; d < rank; d++) {
        at[d] = (n[d] - idx[d]) % n[d];
      }
      sign = -1;
    }
    long off = 2 * layout.offset(at, b);
    z[2 * i] = in[(int) off];
    z[2 * i + 1] = sign * in[(int) off + 1];
  }

  private static void unravel(int linear, int[] n, int[] idx) {
    for (int d = n.length - 1; d >= 0; d--) {
      idx[d] = linear % n[d];
      linear /= n[d];
    }
  }

  private static void transform(Object fft, double[] z, boolean forward) {
    if (fft == null) {
      return;
    }
    if (fft instanceof DoubleFFT_1D) {
      if (forward) ((DoubleFFT_1D) fft).complexForward(z); else ((DoubleFFT_1D) fft).complexInverse(z, false);
    } else if (fft instanceof DoubleFFT_2D) {
      if (forward) ((DoubleFFT_2D) fft).complexForward(z); else ((DoubleFFT_2D) fft).complexInverse(z, false);
    } else if (fft instanceof DoubleFFT_3D) {
      if (forward) ((DoubleFFT_3D) fft).complexForward(z); else ((DoubleFFT_3D) fft).complexInverse(z, false);
    } else {
      float[] f = new float[z.length];
      for (int i = 0; i < z.length; i++) {
        f[i] = (float) z[i];
      }
      if (fft instanceof FloatFFT_1D) {
        if (forward) ((FloatFFT_1D) fft).complexForward(f); else ((FloatFFT_1D) fft).complexInverse(f, false);
      } else if (fft instanceof FloatFFT_2D) {
        if (forward) ((FloatFFT_2D) fft).complexForward(f); else ((FloatFFT_2D) fft).complexInverse(f, false);
      } else {
        if (forward) ((FloatFFT_3D) fft).complexForward(f); else ((FloatFFT_3D) fft).complexInverse(f, false);
      }
      for (int i = 0; i < z.length; i++) {
        z[i] = f[i];
      }
    }
  }
}
