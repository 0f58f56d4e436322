package com.vertxcuda.fft;

/** The sign of the exponent: FORWARD is exp(-2 pi i jk/n), INVERSE exp(+...), both unnormalised as in cuFFT. */
public enum FftDirection {
  FORWARD, INVERSE
}
