package com.vertxcuda.device.isolation;

import com.vertxcuda.codec.CodecProvider;
import com.vertxcuda.codec.WireType;
import com.vertxcuda.device.context.SharedTransfer;

import java.util.List;

/** The link's own message types, registered with every other codec by {@code CudaRuntime.registerCodecs}. */
public final class IsolationCodecs implements CodecProvider {

  private static final WireType<SharedTransfer> SHARED_TRANSFER = WireType.of(SharedTransfer.class, 2,
    (t, out) -> out.writeHandle(t.handle()).writeLong(t.offset()).writeLong(t.length()).writeBoolean(t.toDevice()),
    in -> new SharedTransfer(in.readHandle(), in.readLong(), in.readLong(), in.readBoolean()));

  @Override
  public List<WireType<?>> wireTypes() {
    return List.of(SHARED_TRANSFER);
  }
}
