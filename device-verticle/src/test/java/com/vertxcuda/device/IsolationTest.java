package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.DeviceState;
import com.vertxcuda.message.FaultRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static com.vertxcuda.device.TestDevices.floats;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Process isolation: the context tier in a device host that may die without taking the application. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 90, timeUnit = TimeUnit.SECONDS)
@Tag("runs-once")
class IsolationTest {

  static DeviceOptions processOptions() {
    return TestDevices.options().setIsolation(Isolation.PROCESS);
  }

  static Promise<DeviceEvent> next(DeviceClient c, DeviceEvent.Type type) {
    Promise<DeviceEvent> p = Promise.promise();
    c.events(e -> {
      if (e.getType() == type) {
        p.tryComplete(e);
      }
    });
    return p;
  }

  static boolean alive(long pid) {
    return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
  }

  /** Waits (without blocking the event loop) until {@code pid} has exited. */
  static Future<Void> exited(Vertx vertx, long pid) {
    return Future.fromCompletionStage(ProcessHandle.of(pid).map(ProcessHandle::onExit)
      .orElse(java.util.concurrent.CompletableFuture.completedFuture(null))
      .orTimeout(10, TimeUnit.SECONDS)).mapEmpty();
  }

  @Test
  void killMinus9UnderLoad(Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    SupervisionTest.ReplyLedger ledger = new SupervisionTest.ReplyLedger();
    Promise<DeviceEvent> changed = next(c, DeviceEvent.Type.GENERATION_CHANGED);
    long[] pids = new long[2];
    long[] generations = new long[1];
    TestDevices.deploy(vertx, processOptions()).compose(id -> c.describe()).compose(info -> {
      pids[0] = info.getPid();
      assertNotEquals(ProcessHandle.current().pid(), info.getPid());
      return c.alloc(DType.F32, 1024);
    }).compose(h -> c.upload(h, floats(new float[1024])).compose(x -> {
      generations[0] = h.generation();
      List<Future<?>> load = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        load.add(i % 2 == 0 ? ledger.track(c.download(h)) : ledger.track(c.fill(h.view(i, 10), i)));
        if (i == 80) {
          ProcessHandle.of(pids[0]).ifPresent(ProcessHandle::destroyForcibly);
        }
      }
      return Future.join(load).otherwiseEmpty();
    })).compose(x -> changed.future()).compose(e -> {
      assertEquals(generations[0], e.getOldGeneration());
      assertEquals(generations[0] + 1, e.getNewGeneration());
      assertTrue(e.getReason().contains("SIGKILL"), e.getReason());
      return c.describe();
    }).compose(info -> {
      pids[1] = info.getPid();
      assertEquals(DeviceState.READY, info.getState());
      return FailureCodesTest.stillServes(c);
    }).onComplete(ctx.succeeding(x -> ctx.verify(() -> {
      assertEquals(200, ledger.sent.get());
      assertEquals(200, ledger.replies.get(), "every request got exactly one reply");
      assertEquals(200, ledger.successes.get() + ledger.failed(FailureCode.CONTEXT_LOST)
        + ledger.failed(FailureCode.STALE_HANDLE), "only context loss: " + ledger.failures);
      assertFalse(alive(pids[0]));
      assertNotEquals(pids[0], pids[1]);
      ctx.completeNow();
    })));
  }

  @Test
  @Tag("alone")
  void aSpareDeviceHostTakesOver(Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    DeviceVerticle verticle = new DeviceVerticle(processOptions().setSpareDeviceHost(true));
    long[] pids = new long[2];
    vertx.deployVerticle(verticle).compose(id -> c.describe())
      .compose(info -> {
        pids[0] = info.getPid();
        return waitForSpare(vertx, c, pids[0]);
      })
      .compose(spare -> {
        pids[1] = spare;
        Promise<DeviceEvent> changed = next(c, DeviceEvent.Type.GENERATION_CHANGED);
        ProcessHandle.of(pids[0]).ifPresent(ProcessHandle::destroyForcibly);
        return changed.future();
      })
      .compose(e -> {
        assertEquals(e.getOldGeneration() + 1, e.getNewGeneration());
        return c.describe();
      })
      .compose(info -> {
        assertEquals(pids[1], info.getPid(), "the spare serves generation 2");
        return FailureCodesTest.stillServes(c);
      })
      .onComplete(ctx.succeedingThenComplete());
  }

  /** The pid of the spare device host, once the stats say it stands ready. */
  static Future<Long> waitForSpare(Vertx vertx, DeviceClient c, long current) {
    Promise<Long> p = Promise.promise();
    long start = System.currentTimeMillis();
    vertx.setPeriodic(100, id -> c.stats().onSuccess(stats -> {
      if (p.future().isComplete()) {
        return;
      }
      List<ProcessHandle> hosts = ProcessHandle.current().children()
        .filter(h -> h.pid() != current && h.isAlive())
        .filter(h -> h.info().commandLine().map(cl -> cl.contains("DeviceHostMain")).orElse(false)).toList();
      if (stats.isSpareReady() && hosts.size() == 1) {
        vertx.cancelTimer(id);
        p.complete(hosts.get(0).pid());
      } else if (System.currentTimeMillis() - start > 30_000) {
        vertx.cancelTimer(id);
        p.fail("no spare device host became ready (spareReady " + stats.isSpareReady() + ", " + hosts.size()
          + " other device hosts)");
      }
    }));
    return p.future();
  }

  @Test
  void poisonEndsTheDeviceHost(Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    Promise<DeviceEvent> changed = next(c, DeviceEvent.Type.GENERATION_CHANGED);
    long[] pid = new long[1];
    TestDevices.deploy(vertx, processOptions()).compose(id -> c.describe()).compose(info -> {
      pid[0] = info.getPid();
      return FailureCodesTest.expectFailure(FailureCode.CONTEXT_LOST,
        TestDevices.fault(vertx, c.address(), FaultRequest.Kind.POISON));
    }).compose(x -> changed.future()).compose(e -> {
      assertTrue(e.getReason().contains("CUDA_ERROR_ILLEGAL_ADDRESS"), e.getReason());
      return exited(vertx, pid[0]);
    }).compose(x -> FailureCodesTest.stillServes(c)).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void missedHeartbeatsReplaceAHungDeviceHost(Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    Promise<DeviceEvent> changed = next(c, DeviceEvent.Type.GENERATION_CHANGED);
    long[] pid = new long[1];
    DeviceOptions options = processOptions().setHeartbeatInterval(200).setHeartbeatTimeout(800);
    TestDevices.deploy(vertx, options).compose(id -> c.describe()).compose(info -> {
      pid[0] = info.getPid();
      TestDevices.fault(vertx, c.address(), FaultRequest.Kind.STALL);
      return changed.future();
    }).compose(e -> {
      assertTrue(e.getReason().contains("heartbeat missed"), e.getReason());
      return exited(vertx, pid[0]);
    }).compose(x -> FailureCodesTest.stillServes(c)).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void restartBudgetSpentMeansLost(Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    Promise<DeviceEvent> lost = next(c, DeviceEvent.Type.LOST);
    TestDevices.deploy(vertx, processOptions().setRestartLimit(1)).compose(id -> c.describe())
      .compose(info -> {
        Promise<DeviceEvent> changed = next(c, DeviceEvent.Type.GENERATION_CHANGED);
        ProcessHandle.of(info.getPid()).ifPresent(ProcessHandle::destroyForcibly);
        return changed.future();
      })
      .compose(e -> c.describe())
      .compose(info -> {
        ProcessHandle.of(info.getPid()).ifPresent(ProcessHandle::destroyForcibly);
        return lost.future();
      })
      .compose(e -> {
        assertTrue(e.getReason().contains("restart budget"), e.getReason());
        return FailureCodesTest.expectFailure(FailureCode.CONTEXT_LOST, c.alloc(DType.F32, 1));
      }).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void undeployEndsTheDeviceHostAndLeavesNoSharedMemory(Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    long[] pid = new long[1];
    TestDevices.deploy(vertx, processOptions()).compose(id -> c.describe().compose(info -> {
      pid[0] = info.getPid();
      assertTrue(alive(pid[0]));
      return vertx.undeploy(id);
    })).compose(x -> exited(vertx, pid[0])).onComplete(ctx.succeeding(x -> ctx.verify(() -> {
      assertFalse(alive(pid[0]));
      assertEquals(List.of(), leftovers());
      ctx.completeNow();
    })));
  }

  /**
   * Requests the device verticle refuses before they reach the device host (an upload of the wrong
   * size) do not hold up the ones after them: each is numbered, and the device host is told the
   * number is used up. (It used to wait 2 s per refused number, and a few made the heartbeat miss.)
   */
  @Test
  @Tag("alone")
  void refusedRequestsDoNotHoldUpLaterOnes(Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    SupervisionTest.ReplyLedger ledger = new SupervisionTest.ReplyLedger();
    List<DeviceEvent> changes = new ArrayList<>();
    c.events(e -> {
      if (e.getType() == DeviceEvent.Type.GENERATION_CHANGED) {
        changes.add(e);
      }
    });
    long[] start = new long[1];
    TestDevices.deploy(vertx, processOptions()).compose(id -> c.alloc(DType.F32, 4)).compose(h -> {
      start[0] = System.nanoTime();
      List<Future<?>> all = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        all.add(ledger.track(c.upload(h, Buffer.buffer(new byte[8]))));
        all.add(ledger.track(c.fill(h, i)));
      }
      return Future.join(all).otherwiseEmpty().compose(x -> c.download(h));
    }).onComplete(ctx.succeeding(b -> ctx.verify(() -> {
      long millis = (System.nanoTime() - start[0]) / 1_000_000;
      assertEquals(12, ledger.replies.get());
      assertEquals(6, ledger.failed(FailureCode.BAD_REQUEST));
      assertEquals(6, ledger.successes.get());
      assertArrayEquals(new float[] {5, 5, 5, 5}, floats(b), "the fills ran in order");
      assertTrue(millis < 1500, "12 requests took " + millis + " ms");
      assertEquals(List.of(), changes, "the device host was not replaced");
      ctx.completeNow();
    })));
  }

  /** Transfers check their handles as in-process: a forged empty upload, a negative view. */
  @Test
  void transfersCheckTheirHandles(Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    TestDevices.deploy(vertx, processOptions()).compose(id -> c.alloc(DType.F32, 16)).compose(h -> {
      BufferHandle forged = new BufferHandle(h.node(), h.device(), h.generation(), h.id() + 1000, DType.F32, 16,
        h.tokenHigh(), h.tokenLow(), 0, 0);
      BufferHandle negative = new BufferHandle(h.node(), h.device(), h.generation(), h.id(), DType.F32, 16,
        h.tokenHigh(), h.tokenLow(), 0, -4);
      return FailureCodesTest.expectFailure(FailureCode.NOT_FOUND, c.upload(forged, Buffer.buffer()))
        .compose(x -> FailureCodesTest.expectFailure(FailureCode.BAD_REQUEST, c.download(negative)))
        .compose(x -> c.upload(h.view(0, 0), Buffer.buffer()))
        .compose(x -> FailureCodesTest.stillServes(c));
    }).onComplete(ctx.succeedingThenComplete());
  }

  /**
   * A spare device host that dies is stopped and replaced: when the current one goes next, the new
   * spare alone serves the next generation (the dead one's addresses used to take half the requests).
   */
  @Test
  void aDeadSpareIsReplacedAndNeverServes(Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    long[] pids = new long[3];
    vertx.deployVerticle(new DeviceVerticle(processOptions().setSpareDeviceHost(true))).compose(id -> c.describe())
      .compose(info -> {
        pids[0] = info.getPid();
        return waitForSpare(vertx, c, pids[0]);
      }).compose(spare -> {
        pids[1] = spare;
        ProcessHandle.of(spare).ifPresent(ProcessHandle::destroyForcibly);
        return exited(vertx, spare);
      }).compose(x -> waitForSpare(vertx, c, pids[0])).compose(spare -> {
        pids[2] = spare;
        assertNotEquals(pids[1], spare);
        Promise<DeviceEvent> changed = next(c, DeviceEvent.Type.GENERATION_CHANGED);
        ProcessHandle.of(pids[0]).ifPresent(ProcessHandle::destroyForcibly);
        return changed.future();
      }).compose(e -> c.alloc(DType.F32, 4)).compose(h -> {
        List<Future<?>> fills = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
          fills.add(c.fill(h, i));
        }
        return Future.all(fills).compose(x -> c.describe());
      }).onComplete(ctx.succeeding(info -> ctx.verify(() -> {
        assertEquals(pids[2], info.getPid(), "the new spare serves generation 2");
        ctx.completeNow();
      })));
  }

  /**
   * Starting a device host (a rebuild's next spare) never stops the device's event loop: making the
   * shared region, the socket and the process happens on a thread of its own. Vert.x with one event
   * loop, so a 1 ms periodic timer shares the loop with the device verticle.
   */
  @Test
  @Tag("alone")
  void startingDeviceHostsLeavesTheEventLoopFree(VertxTestContext ctx) {
    Vertx own = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
    DeviceClient c = DeviceClient.create(own);
    // What stops every thread (a collector, a starved CPU) is not the toolkit's: LoopGaps' control says.
    com.vertxcuda.internal.LoopGaps gaps = new com.vertxcuda.internal.LoopGaps(own);
    own.runOnContext(v -> {
      gaps.tick();
      // Two rebuilds; the second is measured (the first loads the classes of the loss and the rebuild
      // on the loop, which is the JVM's warming up).
      TestDevices.deploy(own, processOptions().setSpareDeviceHost(true))
        .compose(id -> rebuilt(own, c))
        .compose(first -> {
          gaps.reset();
          return rebuilt(own, c);
        })
        .onComplete(ar -> {
          gaps.stop();
          double widestMs = gaps.widestMs();
          double controlMs = gaps.controlMs();
          own.close().onComplete(x -> ctx.verify(() -> {
            assertTrue(ar.succeeded(), String.valueOf(ar.cause()));
            System.out.printf("[figure] device hosts started: the event loop's widest gap %.1f ms (a plain thread: %.1f ms)%n",
              widestMs, controlMs);
            assertTrue(widestMs <= controlMs + 20, "the event loop stopped for " + widestMs
              + " ms while device hosts started (a plain thread beside it: " + controlMs + " ms)");
            ctx.completeNow();
          }));
        });
    });
  }

  // Kills the device host (from a thread of its own: a kill takes tens of ms), waits for the generation
  // change, a request served, and the rebuild's next spare to have started meanwhile.
  private static Future<Void> rebuilt(Vertx vertx, DeviceClient c) {
    return c.describe().compose(info -> {
      Promise<DeviceEvent> changed = next(c, DeviceEvent.Type.GENERATION_CHANGED);
      new Thread(() -> ProcessHandle.of(info.getPid()).ifPresent(ProcessHandle::destroyForcibly)).start();
      return changed.future();
    }).compose(e -> c.describe()).compose(info -> {
      Promise<Void> p = Promise.promise();
      vertx.setTimer(1500, id -> p.complete());
      return p.future();
    });
  }

  /** Vert.x closed while a device host starts for the next generation: no process or file stays. */
  @Test
  @Tag("alone")
  void closingVertxWhileRebuildingLeavesNothingBehind(VertxTestContext ctx) {
    Vertx own = Vertx.vertx();
    DeviceClient c = DeviceClient.create(own);
    TestDevices.deploy(own, processOptions().setSpareDeviceHost(false).setOpenDelay(3000))
      .compose(id -> c.describe()).compose(info -> {
        Promise<DeviceEvent> changed = next(c, DeviceEvent.Type.GENERATION_CHANGED);
        ProcessHandle.of(info.getPid()).ifPresent(ProcessHandle::destroyForcibly);
        return changed.future();
      }).compose(e -> {
        Promise<Void> p = Promise.promise();
        own.setTimer(1000, id -> p.complete()); // the next device host is starting (3 s)
        return p.future();
      }).onComplete(ar -> new Thread(() -> {
        try {
          own.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
          long deadline = System.currentTimeMillis() + 15_000;
          while (System.currentTimeMillis() < deadline && (!deviceHosts().isEmpty() || !leftovers().isEmpty())) {
            Thread.sleep(100);
          }
          List<Long> hosts = deviceHosts();
          List<String> files = leftovers();
          ctx.verify(() -> {
            assertTrue(ar.succeeded(), String.valueOf(ar.cause()));
            assertEquals(List.of(), hosts, "device hosts alive");
            assertEquals(List.of(), files, "files left");
          });
          ctx.completeNow();
        } catch (Throwable t) {
          ctx.failNow(t);
        }
      }).start());
  }

  static List<Long> deviceHosts() {
    return ProcessHandle.current().children().filter(ProcessHandle::isAlive)
      .filter(h -> h.info().commandLine().map(cl -> cl.contains("DeviceHostMain")).orElse(false))
      .map(ProcessHandle::pid).toList();
  }

  static List<String> leftovers() throws Exception {
    String prefix = "vertx-cuda-" + ProcessHandle.current().pid() + "-";
    List<String> found = new ArrayList<>();
    for (String dir : List.of("/dev/shm", System.getProperty("java.io.tmpdir"))) {
      if (Files.isDirectory(Path.of(dir))) {
        try (Stream<Path> s = Files.list(Path.of(dir))) {
          s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(prefix)).forEach(found::add);
        }
      }
    }
    return found;
  }

  @Test
  void sharedRegionBuffersUploadWithoutACopyAndDownloadsComeBackInIt(Vertx vertx, VertxTestContext ctx) {
    DeviceVerticle device = new DeviceVerticle(processOptions());
    DeviceClient c = DeviceClient.create(vertx);
    int n = 1 << 18; // 1 MiB: large enough to be lent over the region, not copied out
    vertx.deployVerticle(device).compose(id -> c.alloc(DType.F32, n)).compose(h -> {
      Buffer shared = device.allocateTransferBuffer(4 * n);
      for (int i = 0; i < n; i++) {
        shared.appendFloatLE(i * 2f);
      }
      return c.upload(h, shared).compose(x -> {
        assertTrue(device.releaseTransferBuffer(shared));
        return Future.all(c.download(h), c.download(h.view(10, 3)));
      });
    }).onComplete(ctx.succeeding(all -> ctx.verify(() -> {
      Buffer whole = all.resultAt(0);
      Buffer small = all.resultAt(1);
      assertEquals(2f * (n - 1), whole.getFloatLE(4 * (n - 1)));
      assertArrayEquals(new float[] {20f, 22f, 24f}, floats(small));
      assertTrue(device.releaseTransferBuffer(whole), "a large download lies in the region until released");
      assertFalse(device.releaseTransferBuffer(small), "a small download is copied out of the region");
      ctx.completeNow();
    })));
  }

  /**
   * The device host pins its region in 64 MiB segments as transfers reach them; a transfer whose
   * slot spans segments is copied piece by piece (one copy across two registrations fails on cuda):
   * 100 MiB up from a transfer buffer and back lent over the region, every float where it was.
   */
  @Test
  void transfersSpanningPinnedSegmentsArriveWhole(Vertx vertx, VertxTestContext ctx) {
    DeviceVerticle device = new DeviceVerticle(processOptions());
    DeviceClient c = DeviceClient.create(vertx);
    int n = 25 << 20; // 100 MiB of floats: spans at least one 64 MiB boundary wherever its slot lies
    vertx.deployVerticle(device).compose(id -> c.alloc(DType.F32, n)).compose(h -> {
      Buffer shared = device.allocateTransferBuffer(4 * n);
      for (int i = 0; i < n; i++) {
        shared.appendFloatLE(i);
      }
      return c.upload(h, shared).compose(x -> {
        assertTrue(device.releaseTransferBuffer(shared));
        return c.download(h);
      });
    }).onComplete(ctx.succeeding(whole -> ctx.verify(() -> {
      for (int i = 0; i < n; i += 4099) {
        assertEquals((float) i, whole.getFloatLE(4 * i), "float " + i);
      }
      assertEquals((float) (n - 1), whole.getFloatLE(4 * (n - 1)));
      assertTrue(device.releaseTransferBuffer(whole));
      ctx.completeNow();
    })));
  }

  @Test
  void transferBuffersHoldAtMostThreeQuartersOfTheRegionAndTransfersStillServe(Vertx vertx, VertxTestContext ctx) {
    DeviceVerticle device = new DeviceVerticle(processOptions().setSharedMemorySize(1 << 20));
    DeviceClient c = DeviceClient.create(vertx);
    vertx.deployVerticle(device).compose(id -> c.alloc(DType.F32, 1 << 16)).compose(h -> {
      // Transfer buffers take three quarters of the region, all users may hold; one byte more is
      // refused, naming the bound.
      Buffer held = device.allocateTransferBuffer(768 << 10);
      CudaException e = org.junit.jupiter.api.Assertions.assertThrows(CudaException.class,
        () -> device.allocateTransferBuffer(1));
      assertEquals(FailureCode.OUT_OF_MEMORY, e.code());
      assertTrue(e.getMessage().contains("at most 786432 bytes"), e.getMessage());
      // The last quarter serves transfers: a 256 KiB download (copied out, not lent).
      return c.fill(h, 2).compose(y -> c.download(h)).map(b -> {
        assertEquals(2f, b.getFloatLE(4096));
        assertFalse(device.releaseTransferBuffer(b), "a 256 KiB download is copied out of the region");
        assertTrue(device.releaseTransferBuffer(held));
        return device.allocateTransferBuffer(768 << 10);
      });
    }).onComplete(ctx.succeeding(again -> ctx.verify(() -> {
      assertEquals(0, again.length());
      assertTrue(device.releaseTransferBuffer(again));
      ctx.completeNow();
    })));
  }

  /**
   * One client holding two downloads of half the region each used to fill it: every other
   * client's download, 64 bytes included, was answered QUEUE_FULL until they were dropped. Now
   * users hold at most three quarters of the region; the second large download is copied out instead of lent,
   * and other clients' transfers still find room.
   */
  @Test
  void aClientHoldingLargeDownloadsLeavesRoomForOthers(Vertx vertx, VertxTestContext ctx) {
    DeviceVerticle device = new DeviceVerticle(processOptions().setSharedMemorySize(4 << 20));
    DeviceClient hoarder = DeviceClient.create(vertx);
    DeviceClient other = DeviceClient.create(vertx);
    int half = 1 << 19; // 2 MiB of floats: half the region, the largest slot
    vertx.deployVerticle(device)
      .compose(id -> Future.all(hoarder.alloc(DType.F32, half), hoarder.alloc(DType.F32, half),
        other.alloc(DType.F32, 16), other.alloc(DType.F32, 1 << 18)))
      .compose(all -> {
        BufferHandle a = all.resultAt(0);
        BufferHandle b = all.resultAt(1);
        BufferHandle tiny = all.resultAt(2);
        BufferHandle mid = all.resultAt(3);
        return Future.all(hoarder.fill(a, 1), hoarder.fill(b, 2), other.fill(tiny, 3), other.fill(mid, 4))
          .compose(v -> hoarder.download(a)).compose(da -> hoarder.download(b).compose(db ->
            // Both held by the hoarder while the other client transfers.
            Future.all(other.download(tiny), other.download(mid)).map(small -> {
              Buffer t = small.resultAt(0);
              Buffer m = small.resultAt(1);
              assertEquals(64, t.length());
              assertArrayEquals(new float[] {3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}, floats(t));
              assertEquals(1 << 20, m.length());
              assertEquals(4f, m.getFloatLE((1 << 20) - 4));
              assertEquals(4 * half, da.length());
              assertEquals(4 * half, db.length());
              for (int i = 0; i < half; i += 4099) {
                assertEquals(1f, da.getFloatLE(4 * i), "first download, element " + i);
                assertEquals(2f, db.getFloatLE(4 * i), "second download, element " + i);
              }
              assertTrue(device.releaseTransferBuffer(da), "the first download is lent over the region");
              assertTrue(device.releaseTransferBuffer(db), "the second one, copied out, goes back to the pool");
              return null;
            })));
      })
      .onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void transfersLargerThanTheRegionGoInChunks(Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    int n = 3 << 18; // 3 MiB of floats through a 1 MiB region
    float[] values = new float[n];
    for (int i = 0; i < n; i++) {
      values[i] = i % 1000 - 500;
    }
    TestDevices.deploy(vertx, processOptions().setSharedMemorySize(1 << 20))
      .compose(id -> c.alloc(DType.F32, n))
      .compose(h -> c.upload(h, floats(values)).compose(x -> c.download(h)))
      .onComplete(ctx.succeeding(b -> ctx.verify(() -> {
        assertArrayEquals(values, floats(b));
        ctx.completeNow();
      })));
  }

  /**
   * Requests sent straight over the event bus (no typed client): an upload and a download each
   * larger than the region take the one pump on the device's side, and a fill sent between them,
   * without waiting, lands after the upload and before the download, in both modes.
   */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
  void busTransfersLargerThanTheRegionKeepTheirPlace(boolean process, Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    int n = 3 << 18; // 3 MiB of floats through a 1 MiB region
    float[] values = new float[n];
    for (int i = 0; i < n; i++) {
      values[i] = i % 1000 - 500;
    }
    DeviceOptions options = process ? processOptions().setSharedMemorySize(1 << 20) : TestDevices.options();
    io.vertx.core.eventbus.EventBus bus = vertx.eventBus();
    TestDevices.deploy(vertx, options)
      .compose(id -> c.alloc(DType.F32, n))
      .compose(h -> {
        BufferHandle head = h.view(0, 1024);
        Future<Object> up = bus.request(c.address(), new com.vertxcuda.message.UploadRequest(h, floats(values)))
          .map(m -> m.body());
        Future<Object> fill = bus.request(c.address(), new com.vertxcuda.message.FillRequest(head,
          Float.floatToRawIntBits(7f))).map(m -> m.body());
        Future<Object> down = bus.request(c.address(), new com.vertxcuda.message.DownloadRequest(h)).map(m -> m.body());
        return Future.all(up, fill, down).map(x -> ((com.vertxcuda.message.DownloadReply) down.result()).getData());
      })
      .onComplete(ctx.succeeding(b -> ctx.verify(() -> {
        float[] expected = values.clone();
        java.util.Arrays.fill(expected, 0, 1024, 7f);
        assertArrayEquals(expected, floats(b));
        ctx.completeNow();
      })));
  }

  @Test
  void linkOverAUnixDomainSocket(VertxTestContext ctx) {
    Vertx vertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));
    assumeTrue(vertx.isNativeTransportEnabled(), "no native transport here");
    DeviceClient c = DeviceClient.create(vertx);
    TestDevices.deploy(vertx, processOptions())
      .compose(id -> FailureCodesTest.stillServes(c))
      .onComplete(ar -> {
        // Finish the test before closing: callbacks of a closed Vert.x never run.
        if (ar.succeeded()) {
          ctx.completeNow();
        } else {
          ctx.failNow(ar.cause());
        }
        vertx.close();
      });
  }

  @Test
  void theDeviceHostNeverOutlivesItsParent() throws Exception {
    // A parent JVM that deploys a device in process isolation and prints its device host's pid.
    String java = ProcessHandle.current().info().command().orElseThrow();
    Process parent = new ProcessBuilder(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
      OrphanParent.class.getName()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    long child;
    try (BufferedReader r = new BufferedReader(new InputStreamReader(parent.getInputStream()))) {
      String line = r.readLine();
      assertTrue(line != null && line.startsWith("device-host-pid "), "parent said: " + line);
      child = Long.parseLong(line.substring("device-host-pid ".length()).trim());
    }
    assertTrue(alive(child));
    parent.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    ProcessHandle.of(child).ifPresent(h -> h.onExit().orTimeout(10, TimeUnit.SECONDS).join());
    assertFalse(alive(child), "the device host outlived its parent");
    String prefix = "vertx-cuda-" + parent.pid() + "-";
    assertFalse(new File("/dev/shm").exists() && Stream.of(new File("/dev/shm").list()).anyMatch(n -> n.startsWith(prefix)),
      "shared memory left behind");
  }

  /** The parent of {@link #theDeviceHostNeverOutlivesItsParent}. */
  public static final class OrphanParent {
    public static void main(String[] args) throws Exception {
      Vertx vertx = Vertx.vertx();
      vertx.deployVerticle(new DeviceVerticle(processOptions())).await();
      DeviceInfo info = DeviceClient.create(vertx).describe().await();
      System.out.println("device-host-pid " + info.getPid());
      System.out.flush();
      Thread.sleep(60_000);
    }
  }
}
