package com.vertxcuda.library.rand;

import com.vertxcuda.Library;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.device.spi.LibraryProvider;
import io.vertx.core.Deployable;

/** Deploys a {@link RandVerticle} with each context. */
public final class RandProvider implements LibraryProvider {

  @Override
  public Library library() {
    return Library.RAND;
  }

  @Override
  public Deployable create(LibraryContext context) {
    return new RandVerticle(context);
  }
}
