package com.vertxcuda.library.fft;

import java.util.List;

/**
 * Where the elements of one side of a batched FFT live: storage sizes per dimension, innermost
 * stride and batch distance, all in elements of that side (complex or real).
 */
public record FftLayout(List<Integer> embed, long stride, long dist) {

  /** Element offset of logical index {@code idx} (slowest first) of batch {@code b}. */
  public long offset(int[] idx, int b) {
    long linear = 0;
    for (int i = 0; i < idx.length; i++) {
      linear = linear * (i == 0 ? 1 : embed.get(i)) + idx[i];
    }
    return b * dist + linear * stride;
  }

  /**
   * Whether this side is cuFFT's basic layout for transforms of sizes {@code n} (slowest first):
   * elements contiguous (stride 1, each storage size past the first the transform's), one transform
   * right after the other.
   */
  public boolean contiguous(List<Integer> n) {
    if (stride != 1 || embed.size() != n.size()) {
      return false;
    }
    long product = 1;
    for (int i = 0; i < n.size(); i++) {
      if (i > 0 && embed.get(i).intValue() != n.get(i).intValue()) {
        return false;
      }
      product *= n.get(i);
    }
    return dist == product;
  }

  /**
   * Whether {@code batch} transforms of logical sizes {@code dims} touch each element at most once:
   * the dimensions (the batch one included), taken by increasing step, each step past everything the
   * smaller ones reach. Interleaved layouts (stride = batch, dist = 1) pass; a distance that makes
   * batches land on each other does not.
   */
  public boolean touchesEachElementOnce(int[] dims, int batch) {
    int rank = dims.length;
    long[][] steps = new long[rank + 1][];
    int count = 0;
    long step = stride;
    for (int i = rank - 1; i >= 0; i--) {
      if (dims[i] > 1) {
        steps[count++] = new long[] {step, dims[i]};
      }
      step = Math.multiplyExact(step, i == 0 ? 1L : embed.get(i));
    }
    if (batch > 1) {
      steps[count++] = new long[] {dist, batch};
    }
    long[][] sorted = java.util.Arrays.copyOf(steps, count);
    java.util.Arrays.sort(sorted, (a, b) -> Long.compare(a[0], b[0]));
    long reach = 0;
    for (long[] s : sorted) {
      if (s[0] <= reach) {
        return false;
      }
      reach = Math.addExact(reach, Math.multiplyExact(s[0], s[1] - 1));
    }
    return true;
  }

  /**
   * Elements from the first touched by {@code batch} transforms of logical sizes {@code dims};
   * throws {@link ArithmeticException} when that does not fit in a long.
   */
  public long extent(int[] dims, int batch) {
    long linear = 0;
    for (int i = 0; i < dims.length; i++) {
      linear = Math.addExact(Math.multiplyExact(linear, i == 0 ? 1L : embed.get(i)), dims[i] - 1L);
    }
    return Math.addExact(Math.addExact(Math.multiplyExact(batch - 1L, dist), Math.multiplyExact(linear, stride)), 1L);
  }
}
