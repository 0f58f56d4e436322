package com.vertxcuda.bench;

import com.vertxcuda.device.PollingTransport;
import com.vertxcuda.device.context.InFlight;
import com.vertxcuda.device.impl.CallerWake;
import com.vertxcuda.device.impl.PollingTransportImpl;
import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.transport.Transport;
import org.HdrHistogram.Histogram;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The last hop of a local answer alone, no GPU: from the thread that has it (here a spinning thread
 * standing for the completion thread, which "works" a fixed time per request) to the handler on the
 * caller's event loop, through the toolkit's own answer ({@code InFlight.Answer} for a local caller),
 * one request at a time, the next made from each answer — on a loop that sleeps while it waits and on
 * a {@link PollingTransport}'s, on NIO and epoll.
 *
 * <p>Usage: {@code CallerLoopHop [opMicros] [requests]} (defaults 8 µs, about a 1 KiB fill's time on
 * the GPU with its synchronize, and 40,000; the first fifth warms up).
 */
public final class CallerLoopHop {

  private CallerLoopHop() {
  }

  public static void main(String[] args) throws Exception {
    long opNanos = TimeUnit.MICROSECONDS.toNanos(args.length > 0 ? Long.parseLong(args[0]) : 8);
    int requests = args.length > 1 ? Integer.parseInt(args[1]) : 40_000;
    for (Transport base : new Transport[] {Transport.NIO, Transport.EPOLL}) {
      if (base == null || !base.available()) {
        // Vert.x leaves EPOLL null where Netty's epoll classes are not on the class path.
        System.out.println("[hop] epoll: unavailable, skipped");
        continue;
      }
      for (boolean poll : new boolean[] {false, true}) {
        Histogram h = run(poll ? PollingTransport.create(base, PollingTransport.defaultPollMicros()) : base,
          opNanos, requests);
        System.out.printf("[hop] %-5s %-8s op %3d us: answer -> caller's handler p50 %6.1f us  p99 %6.1f us  "
            + "p99.9 %6.1f us  (%d runs)%n", base.name(), poll ? "polling" : "sleeping", opNanos / 1000,
          h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(99) / 1e3, h.getValueAtPercentile(99.9) / 1e3,
          h.getTotalCount());
      }
    }
  }

  private static Histogram run(Transport transport, long opNanos, int requests) throws Exception {
    Vertx vertx = Vertx.builder().withTransport(transport).build();
    Answerer answerer = new Answerer(opNanos);
    answerer.start();
    try {
      long pollNanos = PollingTransportImpl.pollNanos(vertx);
      Histogram h = Histograms.create();
      Context caller = vertx.getOrCreateContext();
      CompletableFuture<Void> done = new CompletableFuture<>();
      caller.runOnContext(v -> next(caller, pollNanos, answerer, h, requests, 0, done));
      done.get(120, TimeUnit.SECONDS);
      return h;
    } finally {
      answerer.interrupt();
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  private static void next(Context caller, long pollNanos, Answerer answerer, Histogram h, int requests, int i,
                           CompletableFuture<Void> done) {
    if (i == requests) {
      done.complete(null);
      return;
    }
    Promise<Object> promise = Promise.promise();
    InFlight.Answer answer = CallerWake.answer(promise, caller, 0, pollNanos);
    promise.future().onComplete(ar -> {
      if (i >= requests / 5) {
        h.recordValue(System.nanoTime() - (Long) ar.result());
      }
      next(caller, pollNanos, answerer, h, requests, i + 1, done);
    });
    answerer.pending = answer;
  }

  /** Takes each request, spins its time, then answers with the time it answered. */
  private static final class Answerer extends Thread {
    private final long opNanos;
    volatile InFlight.Answer pending;

    Answerer(long opNanos) {
      super("caller-loop-hop-answerer");
      this.opNanos = opNanos;
      setDaemon(true);
    }

    @Override
    public void run() {
      while (!isInterrupted()) {
        InFlight.Answer a = pending;
        if (a == null) {
          Thread.onSpinWait();
          continue;
        }
        pending = null;
        long until = System.nanoTime() + opNanos;
        while (System.nanoTime() - until < 0) {
          Thread.onSpinWait();
        }
        a.succeed(System.nanoTime());
      }
    }
  }
}
