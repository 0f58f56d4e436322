package com.vertxcuda.library.fft;

import com.vertxcuda.Library;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.device.spi.LibraryProvider;
import io.vertx.core.Deployable;

/** Deploys an {@link FftVerticle} with each context. */
public final class FftProvider implements LibraryProvider {

  @Override
  public Library library() {
    return Library.FFT;
  }

  @Override
  public Deployable create(LibraryContext context) {
    return new FftVerticle(context);
  }
}
