package com.vertxcuda.codec;

import java.util.List;

/**
 * Contributes wire types to {@link CudaCodecs#registerAll}. Modules that add message types (the
 * library verticles) list an implementation in {@code META-INF/services}, so one call registers
 * every codec on the class path.
 */
public interface CodecProvider {

  List<WireType<?>> wireTypes();
}
