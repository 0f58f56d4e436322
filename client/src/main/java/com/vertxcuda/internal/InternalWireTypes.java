package com.vertxcuda.internal;

import com.vertxcuda.codec.CodecProvider;
import com.vertxcuda.codec.WireType;

import java.util.List;

/**
 * Binary wire formats of the requests the client implementation and the device send each other
 * (copies between devices, reclaims), listed under {@code META-INF/services} as a
 * {@link CodecProvider}: they belong to this package, so the codec package does not name them.
 * Bump a type's version when its layout changes.
 */
public final class InternalWireTypes implements CodecProvider {

  static final WireType<ReclaimRequest> RECLAIM = WireType.of(ReclaimRequest.class, 1,
    (r, out) -> out.writeString(r.owner()),
    in -> new ReclaimRequest(in.readString()));

  static final WireType<CopyInRequest> COPY_IN = WireType.of(CopyInRequest.class, 3, // 3: no peer flag (always direct)
    (r, out) -> out.writeHandle(r.source()).writeHandle(r.target()).writeLong(r.transfer()),
    in -> new CopyInRequest(in.readHandle(), in.readHandle(), in.readLong()));

  static final WireType<CopyOutRequest> COPY_OUT = WireType.of(CopyOutRequest.class, 2, // 2: handles by reference
    (r, out) -> out.writeHandle(r.source()).writeHandle(r.target()).writeLong(r.transfer()),
    in -> new CopyOutRequest(in.readHandle(), in.readHandle(), in.readLong()));

  static final WireType<CopyInAbort> COPY_IN_ABORT = WireType.of(CopyInAbort.class, 1,
    (r, out) -> out.writeHandle(r.target()).writeLong(r.transfer()),
    in -> new CopyInAbort(in.readHandle(), in.readLong()));

  @Override
  public List<WireType<?>> wireTypes() {
    return List.of(RECLAIM, COPY_IN, COPY_IN_ABORT, COPY_OUT);
  }
}
