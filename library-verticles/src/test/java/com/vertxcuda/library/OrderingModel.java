package com.vertxcuda.library;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.fft.FftClient;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.kernel.KernelClient;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import org.jtransforms.fft.FloatFFT_1D;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Function;

/**
 * A random sequence of operations over some F32 buffers of {@link #SIZE} elements, and a sequential
 * Java model of every buffer as the sequence runs: uploads, downloads, fills and device copies of
 * views, GEMMs of whole buffers as 64x64 matrices, C2C FFTs of whole buffers as 2048 complex
 * values (in place or not), and the built-in scale and add kernels on views. Each download carries
 * what the model holds at its point in the sequence. Every operation generated is valid: none is
 * refused, so any difference is one of order (or of arithmetic, for GEMM and FFT).
 */
final class OrderingModel {

  static final int SIZE = 4096;
  private static final int DIM = 64;
  private static final int POINTS = SIZE / 2;
  /** Values beyond this are scaled back down (an FFT multiplies magnitudes by up to 2048). */
  private static final float LARGEST = 1e3f;

  /** The clients and the buffers the operations name by index. */
  record Target(DeviceClient device, BlasClient blas, FftClient fft, KernelClient kernels, List<BufferHandle> buffers) {
    BufferHandle view(int buffer, int offset, int length) {
      return buffers.get(buffer).view(offset, length);
    }
  }

  /**
   * One operation: how to send it, and for a download what it must read: values, and whether each
   * came through exact arithmetic only (else through a GEMM or an FFT, compared with tolerance).
   */
  record Step(String what, Function<Target, Future<?>> send, float[] expected, boolean[] exact) {
  }

  private final float[][] values;
  private final boolean[][] exact;
  private final int[] mine;
  private final Random random;
  final List<Step> steps = new ArrayList<>();

  /** A model over the buffers {@code mine} (indices into {@code values}, which it updates). */
  OrderingModel(float[][] values, int[] mine, long seed) {
    this.values = values;
    this.mine = mine;
    this.random = new Random(seed);
    this.exact = new boolean[values.length][SIZE];
    for (boolean[] e : exact) {
      java.util.Arrays.fill(e, true);
    }
  }

  /** Random contents for every buffer (what the test uploads before the sequence). */
  static float[][] initial(int buffers, long seed) {
    Random r = new Random(seed);
    float[][] v = new float[buffers][SIZE];
    for (float[] b : v) {
      for (int i = 0; i < SIZE; i++) {
        b[i] = r.nextFloat() * 2 - 1;
      }
    }
    return v;
  }

  /** Appends {@code count} random operations (and the rescalings they need). */
  OrderingModel generate(int count) {
    while (steps.size() < count) {
      switch (random.nextInt(9)) {
        case 0 -> upload();
        case 1, 2 -> download();
        case 3 -> fill();
        case 4 -> copy();
        case 5 -> gemm();
        case 6 -> fft();
        case 7 -> scale();
        default -> add();
      }
      tame();
    }
    return this;
  }

  private int buffer() {
    return mine[random.nextInt(mine.length)];
  }

  private int length() {
    int[] lengths = {1, 7, 64, 512, 1000, 2048, SIZE};
    return lengths[random.nextInt(lengths.length)];
  }

  private int offset(int length) {
    return random.nextInt(SIZE - length + 1);
  }

  // An offset for a second view of `length` in the same buffer: the same as `first`, or apart from it.
  private int sameOrApart(int first, int length) {
    if (random.nextBoolean() || 2 * length > SIZE) {
      return first;
    }
    List<Integer> apart = new ArrayList<>();
    for (int o = 0; o + length <= SIZE; o += Math.max(1, length / 2)) {
      if (o + length <= first || o >= first + length) {
        apart.add(o);
      }
    }
    return apart.isEmpty() ? first : apart.get(random.nextInt(apart.size()));
  }

  private void upload() {
    int b = buffer();
    int n = length();
    int off = offset(n);
    Buffer data = Buffer.buffer(4 * n);
    for (int i = 0; i < n; i++) {
      float v = random.nextFloat() * 2 - 1;
      values[b][off + i] = v;
      exact[b][off + i] = true;
      data.appendFloatLE(v);
    }
    steps.add(new Step("upload b" + b + "[" + off + "+" + n + "]", t -> t.device().upload(t.view(b, off, n), data),
      null, null));
  }

  private void download() {
    int b = buffer();
    int n = length();
    int off = offset(n);
    steps.add(new Step("download b" + b + "[" + off + "+" + n + "]", t -> t.device().download(t.view(b, off, n)),
      java.util.Arrays.copyOfRange(values[b], off, off + n), java.util.Arrays.copyOfRange(exact[b], off, off + n)));
  }

  private void fill() {
    int b = buffer();
    int n = length();
    int off = offset(n);
    float v = (random.nextInt(33) - 16) / 4f;
    java.util.Arrays.fill(values[b], off, off + n, v);
    java.util.Arrays.fill(exact[b], off, off + n, true);
    steps.add(new Step("fill b" + b + "[" + off + "+" + n + "] " + v, t -> t.device().fill(t.view(b, off, n), v),
      null, null));
  }

  private void copy() {
    int from = buffer();
    int to = buffer();
    int n = from == to ? Math.min(length(), SIZE / 2) : length();
    int src = offset(n);
    int dst = offset(n);
    if (from == to) {
      // Apart: the device refuses overlapping copies within a buffer.
      int low = random.nextInt(SIZE - 2 * n + 1);
      int high = low + n + random.nextInt(SIZE - 2 * n - low + 1);
      boolean up = random.nextBoolean();
      src = up ? low : high;
      dst = up ? high : low;
    }
    int s = src;
    int d = dst;
    System.arraycopy(values[from].clone(), s, values[to], d, n);
    System.arraycopy(exact[from].clone(), s, exact[to], d, n);
    steps.add(new Step("copy b" + from + "[" + s + "] to b" + to + "[" + d + "] +" + n,
      t -> t.device().copy(t.view(from, s, n), t.view(to, d, n)), null, null));
  }

  private void gemm() {
    int a = buffer();
    int b = buffer();
    List<Integer> outputs = new ArrayList<>();
    for (int c : mine) {
      if (c != a && c != b) {
        outputs.add(c);
      }
    }
    if (outputs.isEmpty()) {
      return;
    }
    int c = outputs.get(random.nextInt(outputs.size()));
    double alpha = new double[] {0.125, -0.0625, 0.25}[random.nextInt(3)];
    double beta = new double[] {0, 0.5, -1}[random.nextInt(3)];
    float[] out = new float[SIZE];
    for (int col = 0; col < DIM; col++) {
      for (int row = 0; row < DIM; row++) {
        double sum = 0;
        for (int p = 0; p < DIM; p++) {
          sum += (double) values[a][row + p * DIM] * values[b][p + col * DIM];
        }
        out[row + col * DIM] = (float) (alpha * sum + beta * values[c][row + col * DIM]);
      }
    }
    values[c] = out;
    java.util.Arrays.fill(exact[c], false);
    steps.add(new Step("gemm b" + c + " = " + alpha + " b" + a + " b" + b + " + " + beta + " b" + c,
      t -> t.blas().gemm(Transpose.N, Transpose.N, DIM, DIM, DIM, alpha, t.buffers().get(a), DIM, t.buffers().get(b),
        DIM, beta, t.buffers().get(c), DIM), null, null));
  }

  private void fft() {
    int in = buffer();
    int out = random.nextBoolean() ? in : buffer();
    boolean forward = random.nextBoolean();
    float[] z = values[in].clone();
    FloatFFT_1D transform = new FloatFFT_1D(POINTS);
    if (forward) {
      transform.complexForward(z);
    } else {
      transform.complexInverse(z, false);
    }
    values[out] = z;
    java.util.Arrays.fill(exact[out], false);
    FftDirection direction = forward ? FftDirection.FORWARD : FftDirection.INVERSE;
    steps.add(new Step("fft " + direction + " b" + in + " to b" + out, t -> t.fft().transform(FftType.C2C, direction,
      List.of(POINTS), 1, t.buffers().get(in), t.buffers().get(out)), null, null));
  }

  private void scale() {
    int x = buffer();
    int o = buffer();
    int n = length();
    int xo = offset(n);
    int oo = o == x ? sameOrApart(xo, n) : offset(n);
    scale(x, xo, o, oo, n, new float[] {0.5f, -1.5f, 2f, 0.75f}[random.nextInt(4)]);
  }

  private void scale(int x, int xo, int o, int oo, int n, float f) {
    float[] in = java.util.Arrays.copyOfRange(values[x], xo, xo + n);
    boolean[] inExact = java.util.Arrays.copyOfRange(exact[x], xo, xo + n);
    for (int i = 0; i < n; i++) {
      values[o][oo + i] = f * in[i];
      exact[o][oo + i] = inExact[i];
    }
    steps.add(new Step("scale b" + o + "[" + oo + "] = " + f + " b" + x + "[" + xo + "] +" + n,
      t -> t.kernels().scale(t.view(x, xo, n), f, t.view(o, oo, n)), null, null));
  }

  private void add() {
    int x = buffer();
    int y = buffer();
    int o = buffer();
    int n = length();
    int xo = offset(n);
    int yo = offset(n);
    int oo = o == x ? sameOrApart(xo, n) : o == y ? sameOrApart(yo, n) : offset(n);
    if (o == y && !(oo == yo || oo >= yo + n || yo >= oo + n)) {
      return; // the output would overlap an input in part, which the kernel refuses
    }
    float[] a = java.util.Arrays.copyOfRange(values[x], xo, xo + n);
    float[] b = java.util.Arrays.copyOfRange(values[y], yo, yo + n);
    boolean[] ae = java.util.Arrays.copyOfRange(exact[x], xo, xo + n);
    boolean[] be = java.util.Arrays.copyOfRange(exact[y], yo, yo + n);
    for (int i = 0; i < n; i++) {
      values[o][oo + i] = a[i] + b[i];
      exact[o][oo + i] = ae[i] && be[i];
    }
    steps.add(new Step("add b" + o + "[" + oo + "] = b" + x + "[" + xo + "] + b" + y + "[" + yo + "] +" + n,
      t -> t.kernels().add(t.view(x, xo, n), t.view(y, yo, n), t.view(o, oo, n)), null, null));
  }

  // Keeps magnitudes bounded with an exact in-place scale by 2^-10, itself one of the operations.
  private void tame() {
    for (int b : mine) {
      float largest = 0;
      for (float v : values[b]) {
        largest = Math.max(largest, Math.abs(v));
      }
      if (largest > LARGEST) {
        scale(b, 0, b, 0, SIZE, 0x1p-10f);
      }
    }
  }
}
