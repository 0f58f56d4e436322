package com.vertxcuda.device.spi;

import com.vertxcuda.Library;
import com.vertxcuda.device.context.ContextRuntime;
import io.vertx.core.Deployable;

/**
 * Supplies one library verticle to each context that enables it. Listed in
 * {@code META-INF/services/com.vertxcuda.device.spi.LibraryProvider}; the context deploys what it
 * finds, each verticle on a single-thread worker pool of its own.
 */
public interface LibraryProvider {

  Library library();

  /** A new verticle for one context incarnation; it registers at {@code Addresses.contextLibrary}. */
  Deployable create(ContextRuntime runtime);
}
