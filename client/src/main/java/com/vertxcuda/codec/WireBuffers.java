package com.vertxcuda.codec;

import io.netty.buffer.ByteBuf;
import io.vertx.core.buffer.Buffer;

import java.util.Iterator;
import java.util.ServiceLoader;

/** The {@link InPlaceBuffers} found on the class path, asked by {@link WireIn} and {@link WireOut}. */
final class WireBuffers {

  private static final InPlaceBuffers FOUND = find();

  private WireBuffers() {
  }

  /** {@link InPlaceBuffers#backing}, or null without a provider. */
  static ByteBuf backing(Buffer buffer) {
    return FOUND == null ? null : FOUND.backing(buffer);
  }

  /** {@link InPlaceBuffers#appendable}, or null without a provider. */
  static ByteBuf appendable(Buffer buffer) {
    return FOUND == null ? null : FOUND.appendable(buffer);
  }

  private static InPlaceBuffers find() {
    Iterator<InPlaceBuffers> found = ServiceLoader.load(InPlaceBuffers.class, WireBuffers.class.getClassLoader()).iterator();
    return found.hasNext() ? found.next() : null;
  }
}
