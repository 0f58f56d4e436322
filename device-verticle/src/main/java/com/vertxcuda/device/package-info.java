/**
 * The device tier: {@link com.vertxcuda.device.DeviceVerticle} and its options.
 */
@ModuleGen(name = "vertx-cuda-device", groupPackage = "com.vertxcuda.device")
package com.vertxcuda.device;

import io.vertx.codegen.annotations.ModuleGen;
