package com.vertxcuda.device.spi;

import com.vertxcuda.Library;

import io.vertx.core.Deployable;

/**
 * Supplies one library verticle to each context that enables it. Listed in
 * {@code META-INF/services/com.vertxcuda.device.spi.LibraryProvider}; the context deploys what it
 * finds and the libraries its options list.
 */
public interface LibraryProvider {

  Library library();

  /**
   * A new verticle for one context incarnation; when it starts it opens its engine on the
   * submission thread and {@link LibraryContext#register}s its request handler.
   */
  Deployable create(LibraryContext context);
}
