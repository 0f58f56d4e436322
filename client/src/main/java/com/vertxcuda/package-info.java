/**
 * The vertx-cuda contract: what crosses the event bus between an application and a device.
 */
@ModuleGen(name = "vertx-cuda-client", groupPackage = "com.vertxcuda")
package com.vertxcuda;

import io.vertx.codegen.annotations.ModuleGen;
