package com.vertxcuda.codec;

import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * How one message type crosses the bus: its codec name, its class, the format version and its
 * binary writer and reader. {@link CudaCodecs} turns each into a {@code MessageCodec}.
 */
public final class WireType<T> {

  private final String name;
  private final Class<T> type;
  private final byte version;
  private final BiConsumer<T, WireOut> writer;
  private final Function<WireIn, T> reader;

  private WireType(String name, Class<T> type, int version, BiConsumer<T, WireOut> writer, Function<WireIn, T> reader) {
    this.name = name;
    this.type = type;
    this.version = (byte) version;
    this.writer = writer;
    this.reader = reader;
  }

  /** A wire type named after the class ({@code vertx-cuda.<SimpleName>}). */
  public static <T> WireType<T> of(Class<T> type, int version, BiConsumer<T, WireOut> writer, Function<WireIn, T> reader) {
    return new WireType<>("vertx-cuda." + type.getSimpleName(), type, version, writer, reader);
  }

  public String name() { return name; }
  public Class<T> type() { return type; }
  public byte version() { return version; }

  public void write(T value, WireOut out) {
    writer.accept(value, out);
  }

  public T read(WireIn in) {
    return reader.apply(in);
  }
}
