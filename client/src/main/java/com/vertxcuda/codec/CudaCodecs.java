package com.vertxcuda.codec;

import io.vertx.core.eventbus.EventBus;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.WeakHashMap;

/**
 * Registers the message codec of every vertx-cuda message type on an event bus, as the default
 * codec for its class. Safe to call any number of times, from any thread.
 */
public final class CudaCodecs {

  private static final Map<EventBus, Boolean> REGISTERED = Collections.synchronizedMap(new WeakHashMap<>());
  private static volatile List<WireType<?>> all;

  private CudaCodecs() {
  }

  /** Registers every codec on {@code eventBus} once; later calls do nothing. */
  public static void register(EventBus eventBus) {
    synchronized (REGISTERED) {
      if (REGISTERED.containsKey(eventBus)) {
        return;
      }
      for (WireType<?> type : wireTypes()) {
        registerOne(eventBus, type);
      }
      REGISTERED.put(eventBus, Boolean.TRUE);
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

  /** The codec for one wire type (for tests and for links that carry the wire form). */
  public static <T> WireCodec<T> codec(WireType<T> type) {
    return new WireCodec<>(type);
  }

  private static <T> void registerOne(EventBus eventBus, WireType<T> type) {
    eventBus.registerDefaultCodec(type.type(), new WireCodec<>(type));
  }
}
