package com.vertxcuda.internal;

import com.vertxcuda.codec.InPlaceBuffers;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.SelectStrategyFactory;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.internal.PlatformDependent;
import io.vertx.core.Closeable;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.buffer.impl.BufferImpl;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.impl.transports.EpollTransport;
import io.vertx.core.impl.transports.NioTransport;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.internal.buffer.BufferInternal;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetSocket;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.core.spi.cluster.RegistrationListener;
import io.vertx.core.spi.context.storage.ContextLocal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.channels.spi.SelectorProvider;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Supplier;

/**
 * The one place that reaches into Vert.x (and Netty) internals. Each method says why the public API
 * does not do; where an internal is missing (another Vert.x version), the method fails closed: it
 * says it cannot tell rather than guess.
 */
public final class VertxInternals {

  /** The longest node id taken from a message (a Vert.x/Hazelcast node id is 36 characters). */
  static final int MAX_NODE_LENGTH = 256;

  private static final Class<?> CLUSTERED_MESSAGE = find("io.vertx.core.eventbus.impl.clustered.ClusteredMessage");
  private static final Class<?> CLUSTERED_BUS = find("io.vertx.core.eventbus.impl.clustered.ClusteredEventBus");
  private static final MethodHandle SENDER = handle(CLUSTERED_MESSAGE, "getSender", String.class);
  private static final MethodHandle BUS_OPTIONS = handle(CLUSTERED_BUS, "options", EventBusOptions.class);
  private static final MethodHandle NODE_SELECTOR = field(CLUSTERED_BUS, "nodeSelector");

  /** Tests only: false makes {@link #sender} unable to read a clustered message's sender, as on a Vert.x without it. */
  static volatile boolean senderReadable = true;

  private VertxInternals() {
  }

  /**
   * The cluster manager, or null when not clustered. Vert.x gives it only through
   * {@link VertxInternal}; we need it for this node's id and for membership events (which node left).
   */
  public static ClusterManager clusterManager(Vertx vertx) {
    return vertx.isClustered() && vertx instanceof VertxInternal ? ((VertxInternal) vertx).clusterManager() : null;
  }

  /**
   * Runs {@code hook} when {@code vertx} closes. Public Vert.x has no close hook for something that
   * is not a verticle; the cluster watch must stop listening before the cluster manager goes.
   * False when this Vert.x cannot take one (the caller then closes by itself).
   */
  public static boolean addCloseHook(Vertx vertx, Closeable hook) {
    if (!(vertx instanceof VertxInternal)) {
      return false;
    }
    ((VertxInternal) vertx).addCloseHook(hook);
    return true;
  }

  /**
   * A promise whose future completes on the caller's context (never on the completer's thread):
   * the contract for a client's futures when the answer arrives on a device or link thread. Public
   * {@link Promise#promise()} completes on whichever thread completes it.
   */
  public static <T> Promise<T> promise(Vertx vertx) {
    return ((ContextInternal) vertx.getOrCreateContext()).promise();
  }

  /**
   * A promise of {@code context}: its listeners run there, and one that throws is reported to the
   * context rather than thrown at whoever completes it (several completed in one loop — a coalesced
   * group's answers — each get theirs).
   */
  public static <T> Promise<T> promise(Context context) {
    return ((ContextInternal) context).promise();
  }

  /**
   * The tracer of {@code context}'s Vert.x ({@code VertxOptions.setTracingOptions}), or null when none
   * is configured: the one way Vert.x's own clients reach it ({@code ContextInternal.tracer()}), so
   * that every request of the toolkit reports to the tracer the application turned on. Null also for
   * a context that is not Vert.x's own (fails closed: no spans, nothing else changes).
   */
  @SuppressWarnings("unchecked")
  public static io.vertx.core.spi.tracing.VertxTracer<Object, Object> tracer(Context context) {
    if (!(context instanceof ContextInternal)) {
      return null;
    }
    io.vertx.core.spi.tracing.VertxTracer<?, ?> t = ((ContextInternal) context).tracer();
    return t == null || t == io.vertx.core.spi.tracing.VertxTracer.NOOP ? null
      : (io.vertx.core.spi.tracing.VertxTracer<Object, Object>) t;
  }

  /**
   * A context of its own over {@code context} (a duplicate: the same thread, its own local data), for
   * a span a device reports: the tracer keeps the span it starts in the context's local data, which
   * must not become the caller's current span.
   */
  public static Context spanContext(Context context) {
    return ((ContextInternal) context).duplicate();
  }

  /**
   * A context of its own over {@code context} (a duplicate: the same thread and order) whose local
   * data holds {@code value} under {@code key}: what runs on it, and the callbacks of the futures
   * that complete on it, can read the value ({@link #local}); the caller's context does not see it.
   */
  public static Context duplicate(Context context, Object key, Object value) {
    ContextInternal d = ((ContextInternal) context).duplicate();
    d.putLocal(key, value);
    return d;
  }

  /** What {@code context}'s local data holds under {@code key}; null when nothing, or not a Vert.x context. */
  public static <T> T local(Context context, Object key) {
    return context instanceof ContextInternal ? ((ContextInternal) context).getLocal(key) : null;
  }

  /** {@code stage} as a Future completing on the caller's context, for the reason {@link #promise} gives. */
  public static <T> Future<T> fromCompletionStage(Vertx vertx, CompletionStage<T> stage) {
    return Future.fromCompletionStage(stage, vertx.getOrCreateContext());
  }

  /**
   * The node that sent {@code message}, as its event bus stamped it (the id the reply is routed to),
   * or this node for a message sent in this JVM on a Vert.x that is not clustered. Vert.x keeps the
   * sender package-private ({@code ClusteredMessage.getSender()}); the owner of what a request
   * allocates is that node. Null — never a guess — when it cannot be read: a clustered bus whose
   * message is not the expected class, a missing method, or a value that is not a node id.
   */
  public static String sender(Vertx vertx, Message<?> message) {
    if (!vertx.isClustered()) {
      return Nodes.self(vertx);
    }
    if (!senderReadable || CLUSTERED_MESSAGE == null || SENDER == null || !CLUSTERED_MESSAGE.isInstance(message)) {
      return null;
    }
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

  /**
   * Whether this node's clustered event bus runs over TLS. Vert.x keeps the bus's options
   * package-private; a device refuses to send a shared-memory handle over a bus it cannot see is
   * encrypted. False (the cautious answer) when it cannot be read.
   */
  public static boolean eventBusTls(Vertx vertx) {
    EventBusOptions options = eventBusOptions(vertx);
    return options != null && options.isSsl();
  }

  /**
   * A copy of this node's clustered event bus options, or null when the bus is not clustered or they
   * cannot be read. Vert.x keeps them package-private; the bulk side channel ({@link BulkWire})
   * listens on the bus's host and takes its TLS settings from them, so it is exactly as protected.
   */
  public static EventBusOptions eventBusOptions(Vertx vertx) {
    EventBus bus = vertx.eventBus();
    if (CLUSTERED_BUS != null && CLUSTERED_BUS.isInstance(bus) && BUS_OPTIONS != null) {
      try {
        EventBusOptions options = (EventBusOptions) BUS_OPTIONS.invoke(bus);
        return options == null ? null : new EventBusOptions(options);
      } catch (Throwable t) {
        return null;
      }
    }
    return null;
  }

  /** Whether {@link #clusterKnowsWhoServes} can read this Vert.x's node selector (false off a cluster). */
  public static boolean nodeSelectorReadable(Vertx vertx) {
    return nodeSelector(vertx) != null;
  }

  /**
   * Whether this node's clustered event bus holds who serves {@code address} (its node selector has
   * an entry for it: a message sent there now leaves without waiting for the cluster manager). Vert.x
   * keeps its selector private; the caller's order across a remote node's addresses
   * ({@link CallerOrder#behindFirstUse}) must know when Vert.x has forgotten an address — no handler
   * there for a while, the devices redeployed — because the next message to it waits for a lookup
   * and could be overtaken. False (the cautious answer: hold the caller's other sends) when it
   * cannot be read.
   */
  public static boolean clusterKnowsWhoServes(Vertx vertx, String address) {
    RegistrationListener selector = nodeSelector(vertx);
    return selector != null && selector.wantsUpdatesFor(address);
  }

  // The clustered event bus's node selector, or null when there is none or it cannot be read.
  private static RegistrationListener nodeSelector(Vertx vertx) {
    EventBus bus = vertx.eventBus();
    if (CLUSTERED_BUS == null || NODE_SELECTOR == null || !CLUSTERED_BUS.isInstance(bus)) {
      return null;
    }
    try {
      Object selector = NODE_SELECTOR.invoke(bus);
      return selector instanceof RegistrationListener ? (RegistrationListener) selector : null;
    } catch (Throwable t) {
      return null;
    }
  }

  /**
   * A new event-loop context of {@code vertx}, tied to no deployment: what the bulk side channel
   * serves on, shared by every device of the node, must outlive the device that started it (a
   * server made on a verticle's context closes when that verticle is undeployed).
   */
  public static Context newEventLoopContext(Vertx vertx) {
    return ((VertxInternal) vertx).createEventLoopContext();
  }

  /**
   * Vert.x's NIO or epoll transport whose event loops take Netty's select strategies from
   * {@code strategies} (the device's polling transport): subclasses of Vert.x's own, so that Vert.x
   * still knows which transport it runs ({@code isNativeTransportEnabled} is an {@code instanceof}).
   * Epoll only where it is available; otherwise {@code base}'s own, which Vert.x replaces by NIO.
   *
   * @throws IllegalArgumentException for another base
   */
  public static io.vertx.core.spi.transport.Transport withSelectStrategies(
      io.vertx.core.transport.Transport base, SelectStrategyFactory strategies) {
    if (base == io.vertx.core.transport.Transport.NIO) {
      return new StrategiesNio(strategies);
    }
    if (base == io.vertx.core.transport.Transport.EPOLL) {
      return base.available() ? new StrategiesEpoll(strategies) : base.implementation();
    }
    throw new IllegalArgumentException("only NIO or epoll take other select strategies, not " + base.name());
  }

  /** The select strategies {@code vertx}'s transport was made with ({@link #withSelectStrategies}); null if none. */
  public static SelectStrategyFactory selectStrategies(Vertx vertx) {
    io.vertx.core.spi.transport.Transport t = ((VertxInternal) vertx).transport();
    return t instanceof StrategiesNio ? ((StrategiesNio) t).strategies
      : t instanceof StrategiesEpoll ? ((StrategiesEpoll) t).strategies : null;
  }

  private static final class StrategiesNio extends NioTransport {
    private final SelectStrategyFactory strategies;

    StrategiesNio(SelectStrategyFactory strategies) {
      this.strategies = strategies;
    }

    @Override
    public IoHandlerFactory ioHandlerFactory() {
      return NioIoHandler.newFactory(SelectorProvider.provider(), strategies);
    }
  }

  private static final class StrategiesEpoll extends EpollTransport {
    private final SelectStrategyFactory strategies;

    StrategiesEpoll(SelectStrategyFactory strategies) {
      this.strategies = strategies;
    }

    @Override
    public IoHandlerFactory ioHandlerFactory() {
      return EpollIoHandler.newFactory(0, strategies);
    }
  }

  /**
   * The Netty event loop of {@code context} when it is an event-loop context and this thread is that
   * loop's, else null: where a caller's loop schedules its own wake-ups finer than Vert.x timers'
   * milliseconds (the device's caller wake, on the loop's thread only, so it needs no locking).
   */
  public static ScheduledExecutorService currentEventLoop(Context context) {
    if (!(context instanceof ContextInternal) || !context.isEventLoopContext()) {
      return null;
    }
    EventLoop loop = ((ContextInternal) context).nettyEventLoop();
    return loop != null && loop.inEventLoop() ? loop : null;
  }

  /**
   * What {@code context} keeps under {@code local}, made by {@code make} on first use (atomically: a
   * worker context may run on several threads at once), on its root context, so every duplicate of a
   * context (a request's, say) shares it. A Vert.x whose contexts were sized before {@code local} was
   * registered (its service provider not seen when that Vert.x started) has no slot for it: there the
   * value is an entry of the root's data map under {@code fallbackKey}, slower but the same value for
   * the same context.
   */
  public static <T> T rootLocal(Context context, ContextLocal<T> local,
                                Object fallbackKey, Supplier<T> make) {
    ContextInternal root = ((ContextInternal) context).unwrap();
    try {
      return root.getLocal(local, make);
    } catch (IllegalArgumentException noSlot) {
      @SuppressWarnings("unchecked")
      T value = (T) root.contextData().computeIfAbsent(fallbackKey, k -> make.get());
      return value;
    }
  }

  /**
   * Ends what {@code socket} sends (a TCP FIN) while it still reads: a peer still writing hears the
   * last bytes written and the end, where a close with its bytes unread would reset the connection
   * and could lose them. Public Vert.x has no half-close; where the Netty channel cannot be reached
   * or shut, the socket is closed instead.
   */
  public static void shutdownOutput(NetSocket socket) {
    if (socket instanceof NetSocketInternal
      && ((NetSocketInternal) socket).channelHandlerContext().channel()
        instanceof DuplexChannel) {
      ((DuplexChannel) ((NetSocketInternal) socket)
        .channelHandlerContext().channel()).shutdownOutput().addListener(f -> {
          if (!f.isSuccess()) {
            socket.close();
          }
        });
      return;
    }
    socket.close();
  }

  /**
   * The Netty buffer under a Vert.x {@link Buffer}: bulk data is read and written in place through
   * it (public Buffer only copies), so the event loop never copies a large payload.
   */
  public static ByteBuf byteBuf(Buffer buffer) {
    return ((BufferInternal) buffer).getByteBuf();
  }

  /**
   * The Netty buffer under a Vert.x {@link Buffer}, itself: not a view of its current bytes (as
   * {@link #byteBuf} makes, two objects a call), for reading its array in place.
   */
  public static ByteBuf backing(Buffer buffer) {
    return buffer instanceof BufferImpl
      ? ((BufferImpl) buffer).byteBuf() : byteBuf(buffer);
  }

  /**
   * The Netty buffer a Vert.x {@link Buffer} writes into ({@link #backing}), where an encoder may append
   * to its array in place: on the heap, and free to grow without bound, as a new Buffer's is. One over
   * a wrapped array has a maximum, past which the Buffer moves to a new Netty buffer (on an append of
   * a string), and a writer holding the old one would lose what it wrote after. Null otherwise, and
   * for a Buffer of another kind: append through the Buffer then.
   */
  public static ByteBuf appendable(Buffer buffer) {
    if (!(buffer instanceof BufferImpl)) {
      return null;
    }
    ByteBuf b = backing(buffer);
    return b.hasArray() && b.maxCapacity() == Integer.MAX_VALUE ? b : null;
  }

  /** {@link #backing} and {@link #appendable}, for the codec (listed under {@code META-INF/services}). */
  public static final class Buffers implements InPlaceBuffers {

    @Override
    public ByteBuf backing(Buffer buffer) {
      return VertxInternals.backing(buffer);
    }

    @Override
    public ByteBuf appendable(Buffer buffer) {
      return VertxInternals.appendable(buffer);
    }
  }

  /** The bytes of {@code buffer} as a ByteBuffer over the same memory, for the reason {@link #byteBuf} gives. */
  public static ByteBuffer nioBuffer(Buffer buffer) {
    return byteBuf(buffer).nioBuffer();
  }

  /** Bytes {@code [index, index + length)} of {@code buffer} over the same memory, as {@link #nioBuffer(Buffer)}. */
  public static ByteBuffer nioBuffer(Buffer buffer, int index, int length) {
    return byteBuf(buffer).nioBuffer(index, length);
  }

  /** A Vert.x Buffer over {@code buf} without copying (pinned, shared or pooled memory handed to a client). */
  public static Buffer buffer(ByteBuf buf) {
    return BufferInternal.buffer(buf);
  }

  /**
   * The native address of a direct ByteBuffer: the device host's shared region and the lent host
   * buffers hand raw addresses to the backend, and the JDK exposes them only through internals.
   */
  public static long directBufferAddress(ByteBuffer direct) {
    return PlatformDependent.directBufferAddress(direct);
  }

  private static Class<?> find(String name) {
    try {
      return Class.forName(name, false, VertxInternals.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      return null;
    }
  }

  private static MethodHandle field(Class<?> owner, String name) {
    if (owner == null) {
      return null;
    }
    try {
      Field f = owner.getDeclaredField(name);
      return MethodHandles.privateLookupIn(owner, MethodHandles.lookup()).findGetter(owner, name, f.getType());
    } catch (ReflectiveOperationException | RuntimeException e) {
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
