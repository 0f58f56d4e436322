package com.vertxcuda.codec;

import io.vertx.core.eventbus.EventBus;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.ServiceLoader;

/**
 * Registers the message codec of every vertx-cuda message type on an event bus, as the default
 * codec for its class. Each Vert.x's runtime does it once for its event bus
 * ({@code CudaRuntime.registerCodecs}, which every vertx-cuda client and device calls).
 */
public final class CudaCodecs {

  private static volatile List<WireType<?>> all;

  private CudaCodecs() {
  }

  /**
   * Registers every codec on {@code eventBus}: once per event bus (Vert.x refuses a second default
   * codec for a class, so a second call throws {@link IllegalStateException}).
   */
  public static void registerAll(EventBus eventBus) {
    for (WireType<?> type : wireTypes()) {
      registerOne(eventBus, type);
    }
  }

  /** Every wire type: the core ones and those that {@link CodecProvider}s contribute. */
  public static List<WireType<?>> wireTypes() {
    List<WireType<?>> types = all;
    if (types == null) {
      types = new ArrayList<>(CoreWireTypes.ALL);
      for (CodecProvider p : ServiceLoader.load(CodecProvider.class, CudaCodecs.class.getClassLoader())) {
        types.addAll(p.wireTypes());
      }
      all = types = Collections.unmodifiableList(types);
    }
    return types;
  }

  /**
   * The wire type of {@code body}'s class (a pipeline step names its body's type by it);
   * IllegalArgumentException when it has none.
   */
  public static WireType<?> wireTypeOf(Object body) {
    for (WireType<?> t : wireTypes()) {
      if (t.type() == body.getClass()) {
        return t;
      }
    }
    throw new IllegalArgumentException(body.getClass().getName() + " is not a vertx-cuda request");
  }

  /** The wire type called {@code name}; IllegalArgumentException when there is none. */
  public static WireType<?> wireTypeNamed(String name) {
    for (WireType<?> t : wireTypes()) {
      if (t.name().equals(name)) {
        return t;
      }
    }
    throw new IllegalArgumentException("no message type " + name);
  }

  /** The codec for one wire type (for tests and for links that carry the wire form). */
  public static <T> WireCodec<T> codec(WireType<T> type) {
    return new WireCodec<>(type);
  }

  private static <T> void registerOne(EventBus eventBus, WireType<T> type) {
    eventBus.registerDefaultCodec(type.type(), new WireCodec<>(type));
  }
}
