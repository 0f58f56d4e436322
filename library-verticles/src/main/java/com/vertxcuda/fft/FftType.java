package com.vertxcuda.fft;

import com.vertxcuda.DType;

/**
 * The transform kinds of cuFFT: single precision C2C, R2C, C2R and double Z2Z, D2Z, Z2D. C2R and
 * Z2D may overwrite their input (cuFFT does, out of place too): keep a copy if you need it after.
 */
public enum FftType {
  C2C(false, true, true), R2C(false, false, true), C2R(false, true, false),
  Z2Z(true, true, true), D2Z(true, false, true), Z2D(true, true, false);

  private final boolean doublePrecision;
  private final boolean complexInput;
  private final boolean complexOutput;

  FftType(boolean doublePrecision, boolean complexInput, boolean complexOutput) {
    this.doublePrecision = doublePrecision;
    this.complexInput = complexInput;
    this.complexOutput = complexOutput;
  }

  /** The buffers' dtype: F64 for Z2Z, D2Z, Z2D, F32 otherwise. */
  public DType dtype() {
    return doublePrecision ? DType.F64 : DType.F32;
  }

  public boolean isDoublePrecision() { return doublePrecision; }
  /** Whether the input holds interleaved complex values (else reals). */
  public boolean isComplexInput() { return complexInput; }
  /** Whether the output holds interleaved complex values (else reals). */
  public boolean isComplexOutput() { return complexOutput; }
  /** Real to complex (always forward). */
  public boolean isRealToComplex() { return !complexInput; }
  /** Complex to real (always inverse). */
  public boolean isComplexToReal() { return !complexOutput; }
}
