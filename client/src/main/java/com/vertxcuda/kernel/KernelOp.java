package com.vertxcuda.kernel;

/** What a {@link KernelRequest} asks for. */
public enum KernelOp {
  /** Load a module from PTX text ({@code ptx}); replies a {@link ModuleHandle}. */
  LOAD_PTX,
  /** Load a module from a cubin or fatbin image ({@code image}); replies a {@link ModuleHandle}. */
  LOAD_IMAGE,
  /** Compile CUDA C ({@code source}) with NVRTC and load it; replies a {@link ModuleHandle} and the log. */
  COMPILE,
  /** Launch {@code function} of {@code module} with {@code args} on grid × block threads. */
  LAUNCH,
  /** Unload a module; its handles become NOT_FOUND. */
  UNLOAD,
  /** Built-in: every element of {@code output} (F32, F64) becomes {@code scalar}. */
  FILL,
  /** Built-in: output = scalar · x (F32, F64). */
  SCALE,
  /** Built-in: output = x + y (F32, F64). */
  ADD,
  /** Built-in: output = x converted between F32, F16 and BF16 (round to nearest even). */
  CONVERT,
  /**
   * Built-in: output = x · y element by element (F32, F64; C64, C128 as complex products, the
   * pointwise step of an FFT convolution).
   */
  MULTIPLY
}
