package com.vertxcuda.device.impl;

import com.vertxcuda.device.spi.IdleWait;
import com.vertxcuda.device.PollingTransport;
import com.vertxcuda.internal.VertxInternals;
import io.netty.channel.SelectStrategy;
import io.netty.channel.SelectStrategyFactory;
import io.netty.util.IntSupplier;
import io.vertx.core.Vertx;
import io.vertx.core.transport.Transport;

import java.util.Objects;

/**
 * {@link PollingTransport}: Vert.x's own NIO or epoll transport whose Netty I/O handlers take a select
 * strategy of ours ({@link VertxInternals#withSelectStrategies}). Netty asks the strategy before each
 * wait whether to block; where Netty's default blocks (no task queued), ours polls instead
 * ({@code selectNow}: I/O ready now is handled, queued tasks then run, and the loop asks again) while
 * {@link CallerWake#pollNow} says an answer is due soon. A task queued by another thread while the loop
 * polls needs no wake-up: Netty writes its wake-up only to a loop that is about to block or blocked.
 * The device learns the poll time from its Vert.x's transport ({@link #pollNanos(Vertx)}) and hands
 * it to the caller's wait ({@link CallerWake#begin}).
 */
public final class PollingTransportImpl implements PollingTransport {

  private final Transport base;
  private final int pollMicros;
  private final io.vertx.core.spi.transport.Transport implementation;

  public PollingTransportImpl(Transport base, int pollMicros) {
    Objects.requireNonNull(base, "base");
    if (pollMicros < 0) {
      throw new IllegalArgumentException("pollMicros must be 0 or more, not " + pollMicros);
    }
    this.base = base;
    this.pollMicros = pollMicros;
    this.implementation = VertxInternals.withSelectStrategies(base, new Strategies(pollMicros * 1_000L));
  }

  /** {@link PollingTransport#defaultPollMicros()}: the callers' poll time that {@link IdleWait} chooses. */
  public static int defaultPollMicros() {
    return IdleWait.callerPollMicros();
  }

  /**
   * How long the loops of {@code vertx} poll after a request made on them, ns: 0 unless it was built
   * with a {@link PollingTransport} (and its base was available).
   */
  public static long pollNanos(Vertx vertx) {
    SelectStrategyFactory strategies = VertxInternals.selectStrategies(vertx);
    return strategies instanceof Strategies ? ((Strategies) strategies).pollNanos : 0;
  }

  @Override
  public int pollMicros() {
    return pollMicros;
  }

  @Override
  public String name() {
    return base.name();
  }

  @Override
  public boolean available() {
    return base.available();
  }

  @Override
  public Throwable unavailabilityCause() {
    return base.unavailabilityCause();
  }

  @Override
  public io.vertx.core.spi.transport.Transport implementation() {
    return implementation;
  }

  @Override
  public String toString() {
    return "PollingTransport[" + base.name() + ", " + pollMicros + " µs]";
  }

  /** A polling strategy for each event loop of the transport. */
  private static final class Strategies implements SelectStrategyFactory {
    final long pollNanos;

    Strategies(long pollNanos) {
      this.pollNanos = pollNanos;
    }

    @Override
    public SelectStrategy newSelectStrategy() {
      return new Polling();
    }
  }

  /**
   * One per event loop; asked only on its thread. The loop's {@link CallerWake} is made by the first
   * request made on the loop ({@link CallerWake#begin}, told by the device of this transport's poll
   * time); until then it is looked for at each wait.
   */
  private static final class Polling implements SelectStrategy {
    private CallerWake wake;

    @Override
    public int calculateStrategy(IntSupplier selectNow, boolean hasTasks) throws Exception {
      if (hasTasks) {
        return selectNow.get(); // as Netty's default strategy
      }
      CallerWake w = wake;
      if (w == null && (w = wake = CallerWake.onThisLoop()) == null) {
        return SelectStrategy.SELECT;
      }
      return w.pollNow() ? selectNow.get() : SelectStrategy.SELECT;
    }
  }
}
