package com.vertxcuda.codec;

import io.netty.buffer.ByteBuf;
import io.vertx.core.buffer.Buffer;

/**
 * What the codec needs to read and write a {@link Buffer}'s array in place: the Netty buffer under
 * it, which only Vert.x internals give. The client's {@code internal} package, the one place that
 * reaches into them, provides it (listed under {@code META-INF/services}), so the wire format
 * depends on no implementation. Where none is found, {@link WireIn} copies the region it reads and
 * {@link WireOut} appends through the Buffer.
 */
public interface InPlaceBuffers {

  /** The Netty buffer under {@code buffer}, itself (not a view), whose array is read in place; null when it cannot be had. */
  ByteBuf backing(Buffer buffer);

  /**
   * The Netty buffer {@code buffer} writes into, where an encoder may append to its array in place:
   * on the heap and free to grow without bound. Null otherwise: append through the Buffer then.
   */
  ByteBuf appendable(Buffer buffer);
}
