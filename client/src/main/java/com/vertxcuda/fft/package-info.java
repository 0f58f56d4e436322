/**
 * FFTs on the event bus: {@link com.vertxcuda.fft.FftClient} sends {@link com.vertxcuda.fft.FftRequest}s
 * (cuFFT plan-many layouts) to a device's {@code .fft} address. Complex data is interleaved (re, im)
 * in F32 or F64 buffers.
 */
@ModuleGen(name = "vertx-cuda-fft", groupPackage = "com.vertxcuda")
package com.vertxcuda.fft;

import io.vertx.codegen.annotations.ModuleGen;
