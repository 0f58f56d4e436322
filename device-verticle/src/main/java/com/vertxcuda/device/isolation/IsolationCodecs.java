package com.vertxcuda.device.isolation;

import com.vertxcuda.codec.CodecProvider;
import com.vertxcuda.codec.WireType;

import java.util.List;

/** The link's own message types, registered with every other codec by {@code CudaRuntime.registerCodecs}. */
public final class IsolationCodecs implements CodecProvider {

  @Override
  public List<WireType<?>> wireTypes() {
    return List.of(SharedTransfer.WIRE);
  }
}
