package com.vertxcuda.device.spi;

/**
 * Blocking work a request needs before it can be queued on the GPU (a cuFFT plan, an NVRTC compile
 * and module load, a generator): it runs off the submission thread, on a thread with the context
 * current, while the request keeps its place in the context's order. Its result comes back to
 * {@link RequestType.Handler#submit} on the submission thread. A result no request takes (its request
 * timed out meanwhile, or the context closed) is closed if it is {@link AutoCloseable}.
 */
@FunctionalInterface
public interface Preparation {

  Object prepare() throws Exception;
}
