package com.vertxcuda.library.blas;

import com.vertxcuda.Library;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.device.spi.LibraryProvider;
import io.vertx.core.Deployable;

/** Deploys a {@link BlasVerticle} with each context. */
public final class BlasProvider implements LibraryProvider {

  @Override
  public Library library() {
    return Library.BLAS;
  }

  @Override
  public Deployable create(LibraryContext context) {
    return new BlasVerticle(context);
  }
}
