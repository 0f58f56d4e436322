/**
 * Kernels on the event bus: {@link com.vertxcuda.kernel.KernelClient} loads PTX or cubin modules,
 * compiles CUDA C with NVRTC, launches functions with buffer and scalar arguments, and runs the
 * built-in elementwise kernels (fill, scale, add, F32/F16/BF16 conversion) on every backend.
 */
@ModuleGen(name = "vertx-cuda-kernel", groupPackage = "com.vertxcuda")
package com.vertxcuda.kernel;

import io.vertx.codegen.annotations.ModuleGen;
