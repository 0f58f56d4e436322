/**
 * BLAS on the event bus: {@link com.vertxcuda.blas.BlasClient} sends {@link com.vertxcuda.blas.BlasRequest}s
 * to a device's {@code .blas} address. Matrices are column-major as in cuBLAS.
 */
@ModuleGen(name = "vertx-cuda-blas", groupPackage = "com.vertxcuda")
package com.vertxcuda.blas;

import io.vertx.codegen.annotations.ModuleGen;
