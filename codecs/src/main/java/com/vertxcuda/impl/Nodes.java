package com.vertxcuda.impl;

import com.vertxcuda.Addresses;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.internal.VertxInternal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * The node word of this Vert.x instance in the address scheme, and what the event bus knows about
 * a message's sending node and its own transport. Vert.x keeps the last two package-private, so
 * they are read here, in one place, through method handles found once.
 */
public final class Nodes {

  /** The longest node id taken from a message (a Vert.x/Hazelcast node id is 36 characters). */
  static final int MAX_NODE_LENGTH = 256;

  private static final Class<?> CLUSTERED_MESSAGE = find("io.vertx.core.eventbus.impl.clustered.ClusteredMessage");
  private static final Class<?> CLUSTERED_BUS = find("io.vertx.core.eventbus.impl.clustered.ClusteredEventBus");
  private static final MethodHandle SENDER = handle(CLUSTERED_MESSAGE, "getSender", String.class);
  private static final MethodHandle BUS_OPTIONS = handle(CLUSTERED_BUS, "options", EventBusOptions.class);

  private Nodes() {
  }

  /** The cluster node id when clustered, otherwise {@link Addresses#LOCAL_NODE}. */
  public static String self(Vertx vertx) {
    if (vertx.isClustered() && vertx instanceof VertxInternal) {
      VertxInternal internal = (VertxInternal) vertx;
      if (internal.clusterManager() != null && internal.clusterManager().getNodeId() != null) {
        return internal.clusterManager().getNodeId();
      }
    }
    return Addresses.LOCAL_NODE;
  }

  /**
   * The node that sent {@code message}, as the event bus routed it (the id the sending node's event
   * bus stamps on every clustered message, which it also uses to route the reply), or this node
   * for a message sent in this JVM. Null when the event bus does not say (an unexpected Vert.x
   * version) or names something that is not a node id.
   */
  public static String sender(Vertx vertx, Message<?> message) {
    if (CLUSTERED_MESSAGE != null && CLUSTERED_MESSAGE.isInstance(message) && SENDER != null) {
      try {
        String sender = (String) SENDER.invoke(message);
        if (sender != null && !sender.isEmpty() && sender.length() <= MAX_NODE_LENGTH && sender.indexOf('.') < 0) {
          return sender;
        }
        return null;
      } catch (Throwable t) {
        return null;
      }
    }
    return self(vertx);
  }

  /** Whether this node's clustered event bus runs over TLS ({@link EventBusOptions#isSsl()}). */
  public static boolean eventBusTls(Vertx vertx) {
    EventBus bus = vertx.eventBus();
    if (CLUSTERED_BUS != null && CLUSTERED_BUS.isInstance(bus) && BUS_OPTIONS != null) {
      try {
        EventBusOptions options = (EventBusOptions) BUS_OPTIONS.invoke(bus);
        return options != null && options.isSsl();
      } catch (Throwable t) {
        return false;
      }
    }
    return false;
  }

  private static Class<?> find(String name) {
    try {
      return Class.forName(name, false, Nodes.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      return null;
    }
  }

  private static MethodHandle handle(Class<?> owner, String name, Class<?> returns) {
    if (owner == null) {
      return null;
    }
    try {
      return MethodHandles.privateLookupIn(owner, MethodHandles.lookup())
        .findVirtual(owner, name, MethodType.methodType(returns));
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }
}
