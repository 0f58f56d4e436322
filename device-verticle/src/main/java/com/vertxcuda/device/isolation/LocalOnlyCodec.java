package com.vertxcuda.device.isolation;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageCodec;

/** A codec for a message type that only ever travels within one JVM (it refuses the wire). */
final class LocalOnlyCodec<T> implements MessageCodec<T, T> {

  private final Class<T> type;

  LocalOnlyCodec(Class<T> type) {
    this.type = type;
  }

  @Override
  public void encodeToWire(Buffer buffer, T t) {
    throw new IllegalStateException(type.getSimpleName() + " never leaves its JVM");
  }

  @Override
  public T decodeFromWire(int pos, Buffer buffer) {
    throw new IllegalStateException(type.getSimpleName() + " never leaves its JVM");
  }

  @Override
  public T transform(T t) {
    return t;
  }

  @Override
  public String name() {
    return "vertx-cuda.local." + type.getSimpleName();
  }

  @Override
  public byte systemCodecID() {
    return -1;
  }
}
