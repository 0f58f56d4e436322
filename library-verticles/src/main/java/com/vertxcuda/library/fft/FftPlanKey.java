package com.vertxcuda.library.fft;

import com.vertxcuda.fft.FftType;

import java.util.List;

/** What makes two FFT requests share a plan. */
public record FftPlanKey(FftType type, List<Integer> n, FftLayout input, FftLayout output, int batch) {

  public int[] dims() {
    return n.stream().mapToInt(Integer::intValue).toArray();
  }
}
