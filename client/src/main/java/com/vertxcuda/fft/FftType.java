package com.vertxcuda.fft;

import com.vertxcuda.DType;

/**
 * The transform kinds of cuFFT: single precision C2C, R2C, C2R and double Z2Z, D2Z, Z2D. C2R and
 * Z2D may overwrite their input (cuFFT does, out of place too): keep a copy if you need it after.
 *
 * <p>A complex side takes either a complex buffer ({@link #complexDtype()}: C64, C128), counted in
 * complex elements, or a real one ({@link #dtype()}) holding interleaved real, imaginary pairs, whose
 * view must start on a whole pair. Sizes, strides and distances are in complex elements either way.
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

  /** The real buffers' dtype: F64 for Z2Z, D2Z, Z2D, F32 otherwise. */
  public DType dtype() {
    return doublePrecision ? DType.F64 : DType.F32;
  }

  /** The dtype a complex side may also have: C128 for Z2Z, D2Z, Z2D, C64 otherwise. */
  public DType complexDtype() {
    return doublePrecision ? DType.C128 : DType.C64;
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
