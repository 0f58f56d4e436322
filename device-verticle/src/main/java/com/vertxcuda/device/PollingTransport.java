package com.vertxcuda.device;

import com.vertxcuda.device.impl.PollingTransportImpl;
import io.vertx.core.transport.Transport;

/**
 * A Vert.x transport for the callers of a local device: while a request an event loop made to a
 * device of this JVM is unanswered, the loop keeps looking for I/O and tasks instead of sleeping, for
 * up to {@link #pollMicros} after the request (or its last answer), so the answer runs on the caller's
 * context as soon as it is ready rather than after the loop's wake-up. At other times its loops sleep
 * as Vert.x's do. For short operations that wake-up is most of the toolkit's own time, longer than a
 * small fill itself; for an FFT or a GEMM of a few hundred microseconds to milliseconds it is still a
 * wake-up on every answer's path ({@link #defaultPollMicros}; the hop table in bench/results/INDEX.md).
 *
 * <pre>{@code
 * Vertx vertx = Vertx.builder().withTransport(PollingTransport.create()).build();
 * }</pre>
 *
 * The cost is a core's worth of polling on each loop waiting for a local answer, for as long as the
 * answer takes up to the poll time ({@link #defaultPollMicros}: 20 ms on a host of 8 cores or more,
 * as the device's own threads spin while work is on the GPU; 100 µs on a smaller host, where the loop
 * also yields the core at every 256th step). Loops with nothing unanswered, and requests sent to
 * another node or made off an event loop, are not affected; {@link #create(Transport, int)} takes a
 * shorter poll time where cores are scarce. Built on Vert.x's NIO transport or on its native epoll
 * transport (which needs {@code netty-transport-native-epoll}); {@link Transport#available} and the
 * fallback to NIO when the base is unavailable are Vert.x's.
 */
public interface PollingTransport extends Transport {

  /**
   * The poll time of {@link #create()}, µs: 20 000 on a host of 8 cores or more (one-at-a-time work
   * up to 20 ms is answered to an awake loop), 100 on a smaller one (short operations only).
   */
  static int defaultPollMicros() {
    return PollingTransportImpl.defaultPollMicros();
  }

  /** Polling loops on Vert.x's native transport where it is available (epoll), else on NIO, polling {@link #defaultPollMicros}. */
  static PollingTransport create() {
    Transport base = Transport.EPOLL != null && Transport.EPOLL.available() ? Transport.EPOLL : Transport.NIO;
    return create(base, defaultPollMicros());
  }

  /**
   * Polling loops on {@code base} ({@link Transport#NIO} or {@link Transport#EPOLL}), each polling for
   * up to {@code pollMicros} after a local request or answer (0: never, the loops then behave as
   * {@code base}'s).
   *
   * @throws IllegalArgumentException for another base or a negative poll time
   */
  static PollingTransport create(Transport base, int pollMicros) {
    return new PollingTransportImpl(base, pollMicros);
  }

  /** How long a loop polls after a local request or answer, µs. */
  int pollMicros();
}
