/**
 * Random numbers on the event bus: {@link com.vertxcuda.rand.RandClient} sends
 * {@link com.vertxcuda.rand.RandRequest}s to a device's {@code .rand} address. Each request names its
 * generator, seed and offset, so the same request gives the same numbers on the same backend.
 */
@ModuleGen(name = "vertx-cuda-rand", groupPackage = "com.vertxcuda")
package com.vertxcuda.rand;

import io.vertx.codegen.annotations.ModuleGen;
