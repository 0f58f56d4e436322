package com.vertxcuda.device.impl;

import com.vertxcuda.device.context.InFlight;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.device.PollingTransport;
import com.vertxcuda.device.TestDevices;
import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.transport.Transport;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A loop of a {@link PollingTransport} polls instead of sleeping while a local answer is due to it, for
 * its poll time at most, and sleeps otherwise; answers still run on the caller's context; a device
 * served from such loops works as on any other; Vert.x still knows which transport it runs. On both
 * bases the transport is made on (the native one, epoll, is on the test classpath).
 */
@ExtendWith(VertxExtension.class)
class PollingTransportTest {

  private Vertx vertx;

  private Vertx polling(String base, int pollMicros) {
    Transport transport = "epoll".equals(base) ? Transport.EPOLL : Transport.NIO;
    vertx = Vertx.builder().withTransport(PollingTransport.create(transport, pollMicros)).build();
    assertEquals("epoll".equals(base), vertx.isNativeTransportEnabled(), "Vert.x knows its transport");
    return vertx;
  }

  @AfterEach
  void stop() throws Exception {
    if (vertx != null) {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"nio", "epoll"})
  @Tag("alone") // polls and sleeps judged within milliseconds
  void theLoopPollsForADueAnswerAndStopsOnceItRan(String base, VertxTestContext test) {
    polling(base, 500_000);
    Context caller = vertx.getOrCreateContext();
    Promise<Object> promise = Promise.promise();
    AtomicReference<CallerWake> wake = new AtomicReference<>();
    caller.runOnContext(v -> {
      InFlight.Answer answer = CallerWake.answer(promise, caller, 0, PollingTransportImpl.pollNanos(vertx));
      wake.set(CallerWake.onThisLoop());
      test.verify(() -> assertNotNull(wake.get(), "a polling loop keeps awake for its answer, with no wake interval"));
      // Answered 50 ms later from another thread, as the completion thread does.
      new Thread(() -> {
        try {
          Thread.sleep(50);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        answer.succeed("done");
      }).start();
    });
    promise.future().onComplete(test.succeeding(body -> test.verify(() -> {
      assertEquals("done", body);
      assertSame(caller, Vertx.currentContext(), "answered on the caller's context");
      long polls = wake.get().polls();
      assertTrue(polls > 0, "the loop polled while the answer was due");
      vertx.setTimer(20, t -> test.verify(() -> {
        assertEquals(polls, wake.get().polls(), "nothing unanswered: the loop sleeps, a timer wakes it without a poll");
        test.completeNow();
      }));
    })));
  }

  @ParameterizedTest
  @ValueSource(strings = {"nio", "epoll"})
  @Tag("alone") // polls and sleeps judged within milliseconds
  void anAnswerThatDoesNotComePollsOnlyForThePollTime(String base, VertxTestContext test) {
    // Poll times here are long against a loaded host's scheduling: on the 2-core VM with another build
    // running, a loop's thread was once kept off a core for over 20 ms right after the request.
    polling(base, 100_000);
    Context caller = vertx.getOrCreateContext();
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    caller.runOnContext(v -> {
      long thread = Thread.currentThread().getId();
      long cpu0 = threads.getThreadCpuTime(thread);
      long t0 = System.nanoTime();
      vertx.setTimer(800, t -> test.verify(() -> {
        CallerWake wake = CallerWake.onThisLoop();
        double busy = (threads.getThreadCpuTime(thread) - cpu0) / (double) (System.nanoTime() - t0);
        assertTrue(wake.polls() > 0, "it polled first");
        // 100 ms of polling in 800 ms: a loop polling all along measures ~100 % here.
        assertTrue(busy < 0.5, "the loop was busy " + Math.round(busy * 100) + " % of the time");
        long polls = wake.polls();
        // A new request polls again (looked at every millisecond), and stops when it is answered.
        CallerWake again = CallerWake.begin(caller, 0, PollingTransportImpl.pollNanos(vertx));
        assertSame(wake, again, "one per loop");
        long[] looks = {0};
        vertx.setPeriodic(1, p -> test.verify(() -> {
          if (again.polls() == polls && ++looks[0] < 100) {
            return;
          }
          vertx.cancelTimer(p);
          assertTrue(again.polls() > polls, "polled again for the new request");
          again.end();
          again.end();
          long after = again.polls();
          vertx.setTimer(5, t3 -> test.verify(() -> {
            assertEquals(after, again.polls(), "answered: no more polls");
            test.completeNow();
          }));
        }));
      }));
      // The last thing the task does: the request is admitted.
      test.verify(() -> assertNotNull(CallerWake.begin(caller, 0, PollingTransportImpl.pollNanos(vertx))));
    });
  }

  @ParameterizedTest
  @ValueSource(strings = {"nio", "epoll"})
  void aDeviceServesCallersOnPollingLoops(String base, VertxTestContext test) {
    polling(base, PollingTransport.defaultPollMicros());
    DeviceClient device = DeviceClient.create(vertx);
    Context caller = vertx.getOrCreateContext();
    float[] data = {1.5f, -2f, 3.25f, 0f, 7f};
    TestDevices.deploy(vertx, TestDevices.options())
      .compose(id -> {
        Promise<float[]> read = Promise.promise();
        caller.runOnContext(v -> device.alloc(DType.F32, data.length)
          .compose(h -> device.upload(h, data))
          .compose(h -> device.downloadFloats(h).compose(f -> device.free(h).map(f)))
          .onComplete(ar -> {
            test.verify(() -> {
              assertSame(caller, Vertx.currentContext(), "answered on the caller's context");
              CallerWake wake = CallerWake.onThisLoop();
              assertNotNull(wake, "the device had the caller's loop poll for its answers");
              assertEquals(PollingTransport.defaultPollMicros() * 1_000L, wake.pollNanos());
            });
            read.handle(ar);
          }));
        return read.future();
      })
      .onComplete(test.succeeding(floats -> test.verify(() -> {
        assertArrayEquals(data, floats);
        test.completeNow();
      })));
  }

  @Test
  void madeOnNioOrEpollWithAPollTimeOfZeroOrMore() {
    assertThrows(IllegalArgumentException.class, () -> PollingTransport.create(Transport.NIO, -1));
    assertThrows(NullPointerException.class, () -> PollingTransport.create(null, 10));
    if (Transport.KQUEUE != null) {
      assertThrows(IllegalArgumentException.class, () -> PollingTransport.create(Transport.KQUEUE, 10));
    }
    PollingTransport made = PollingTransport.create();
    assertEquals("epoll", made.name().toLowerCase(), "epoll where it is available (it is on the test classpath)");
    assertEquals(PollingTransport.defaultPollMicros(), made.pollMicros());
    // As long as the device's own threads spin for outstanding work where cores allow, short otherwise.
    assertEquals(Runtime.getRuntime().availableProcessors() >= 8 ? 20_000 : 100, made.pollMicros());
    assertTrue(made.available());
  }

  @Test
  void aPollTimeOfZeroNeverPolls(VertxTestContext test) {
    polling("nio", 0);
    Context caller = vertx.getOrCreateContext();
    caller.runOnContext(v -> test.verify(() -> {
      assertNull(CallerWake.begin(caller, 0, PollingTransportImpl.pollNanos(vertx)), "a loop that does not poll, with no wake interval: nothing begins");
      test.completeNow();
    }));
  }
}
