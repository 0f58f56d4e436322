package com.vertxcuda.fft.impl;

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
