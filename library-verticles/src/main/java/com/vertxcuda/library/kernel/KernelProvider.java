package com.vertxcuda.library.kernel;

import com.vertxcuda.Library;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.device.spi.LibraryProvider;
import io.vertx.core.Deployable;

public final class KernelProvider implements LibraryProvider {

  @Override
  public Library library() {
    return Library.KERNEL;
  }

  @Override
  public Deployable create(LibraryContext context) {
    return new KernelVerticle(context);
  }
}
