package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.FailureCode;
import com.vertxcuda.PlacementPolicy;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.DeviceState;
import com.vertxcuda.message.FaultRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Several devices on one node, simulated by the host backend and deployed with one call
 * ({@link DeviceNode}): each its own ordinal, memory and failure domain; copies between them
 * byte-equal and ordered on both devices; placement spreads over them; one lost device leaves the
 * others serving. Runs in the isolation mode of the suite (both in CI).
 */
@ExtendWith(VertxExtension.class)
class MultiDeviceTest {

  private static NodeOptions node(int devices) {
    return node(devices, true);
  }

  /**
   * {@code peerCopy}: in-process, copies between the devices go straight from context to context;
   * off (and always in process isolation) they are staged through this JVM.
   */
  private static NodeOptions node(int devices, boolean peerCopy) {
    return new NodeOptions().setHostDevices(devices).setDeviceOptions(TestDevices.options()
      .setBackend(BackendKind.HOST).setRegistryMinInterval(20).setPeerCopy(peerCopy));
  }

  private static DeviceClient client(Vertx vertx, int device) {
    // The smallest views, so copies of a few pages go in many chunks.
    return DeviceClient.create(vertx, new DeviceClientOptions().setDevice(device).setMaxMessageSize(4096));
  }

  private static float[] random(int n, long seed) {
    Random r = new Random(seed);
    float[] v = new float[n];
    for (int i = 0; i < n; i++) {
      v[i] = r.nextFloat();
    }
    return v;
  }

  @ParameterizedTest
  @ValueSource(ints = {2, 4})
  void oneCallDeploysIndependentDevices(int n, Vertx vertx, VertxTestContext ctx) {
    DeviceNode.deploy(vertx, node(n)).compose(node -> {
      assertEquals(n, node.devices().size());
      List<Future<DeviceInfo>> infos = new ArrayList<>();
      for (int d = 0; d < n; d++) {
        infos.add(client(vertx, d).describe());
      }
      // Memory is each device's own: 1 MiB on device 0 shows there only.
      return Future.all(infos).compose(all -> client(vertx, 0).alloc(DType.F32, 1 << 18).map(h -> all))
        .compose(all -> {
          Set<Integer> ordinals = new HashSet<>();
          for (int d = 0; d < n; d++) {
            DeviceInfo info = all.resultAt(d);
            ordinals.add(info.getDevice());
            assertEquals(DeviceState.READY, info.getState());
            assertEquals("host", info.getBackend());
          }
          assertEquals(n, ordinals.size(), "every device its own ordinal");
          return Future.all(client(vertx, 0).stats(), client(vertx, n - 1).stats());
        })
        .compose(stats -> {
          assertEquals(1L << 20, stats.<com.vertxcuda.DeviceStats>resultAt(0).getBytesAllocated());
          assertEquals(0L, stats.<com.vertxcuda.DeviceStats>resultAt(1).getBytesAllocated());
          return node.undeploy();
        });
    }).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void aListOfDevicesIsServedAsAsked(Vertx vertx, VertxTestContext ctx) {
    DeviceNode.deploy(vertx, node(1).setDevices(List.of(1, 3)))
      .compose(node -> {
        assertEquals(List.of(1, 3), node.ordinals());
        return Future.all(client(vertx, 1).describe(), client(vertx, 3).describe());
      })
      .onComplete(ctx.succeeding(all -> ctx.verify(() -> {
        assertEquals(3, all.<DeviceInfo>resultAt(1).getDevice());
        ctx.completeNow();
      })));
  }

  /**
   * Sent without waiting: upload to A, copy A to B, overwrite A, read B and A. B reads what was
   * uploaded (the read waits for the copy), A reads the overwrite (which waited for the copy's reads).
   * Several chunks, views at offsets, a copy back the other way.
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void copiesBetweenDevicesAreByteEqualAndOrdered(boolean peerCopy, Vertx vertx, VertxTestContext ctx) {
    int n = 10_000; // 40 000 bytes: ten 4 KiB chunks, more than the window
    float[] data = random(n, 7);
    DeviceClient a = client(vertx, 0);
    DeviceClient b = client(vertx, 1);
    DeviceNode.deploy(vertx, node(2, peerCopy))
      .compose(node -> Future.all(a.alloc(DType.F32, n), b.alloc(DType.F32, n), b.alloc(DType.F32, n + 500)))
      .compose(all -> {
        boolean inProcess = TestDevices.isolation() != Isolation.PROCESS;
        assertEquals(peerCopy && inProcess, com.vertxcuda.device.context.PeerCopies.direct(a.address(), b.address()),
          "straight from context to context exactly when both share this process and allow it");
        BufferHandle x = all.resultAt(0);
        BufferHandle y = all.resultAt(1);
        BufferHandle z = all.resultAt(2);
        a.upload(x, data);
        Future<BufferHandle> copied = b.copy(x, y); // through B's client, source on A
        a.fill(x, -1);
        Future<float[]> onB = b.downloadFloats(y);
        Future<float[]> onA = a.downloadFloats(x);
        // A view into a view, and back from B to A.
        Future<BufferHandle> viewCopy = a.copy(y.view(100, 3000), z.view(500, 3000));
        Future<float[]> viewOnB = b.downloadFloats(z.view(500, 3000));
        Future<BufferHandle> back = a.copy(y, x);
        Future<float[]> backOnA = a.downloadFloats(x);
        return Future.all(List.of(copied, onB, onA, viewCopy, viewOnB, back, backOnA)).map(v -> {
          assertEquals(y, copied.result());
          assertArrayEquals(data, onB.result(), "B reads what A held when the copy was made");
          float[] minusOne = new float[n];
          java.util.Arrays.fill(minusOne, -1);
          assertArrayEquals(minusOne, onA.result(), "A's later fill came after the copy read it");
          assertArrayEquals(java.util.Arrays.copyOfRange(data, 100, 3100), viewOnB.result());
          assertArrayEquals(data, backOnA.result());
          return v;
        });
      })
      .onComplete(ctx.succeedingThenComplete());
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void aCopyLargerThanMessagesGoesInDefaultChunks(boolean peerCopy, Vertx vertx, VertxTestContext ctx) {
    int n = (9 << 20) / 4 + 3; // above the default 8 MiB view, not a multiple of it
    float[] data = random(n, 11);
    DeviceClient a = DeviceClient.create(vertx, new DeviceClientOptions().setDevice(0));
    DeviceClient b = DeviceClient.create(vertx, new DeviceClientOptions().setDevice(1));
    DeviceNode.deploy(vertx, node(2, peerCopy))
      .compose(node -> Future.all(a.alloc(DType.F32, n), b.alloc(DType.F32, n)))
      .compose(all -> {
        a.upload(all.<BufferHandle>resultAt(0), data);
        a.copy(all.resultAt(0), all.resultAt(1));
        return b.downloadFloats(all.resultAt(1));
      })
      .onComplete(ctx.succeeding(read -> ctx.verify(() -> {
        assertArrayEquals(data, read);
        ctx.completeNow();
      })));
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void aCopyBetweenDevicesIsRefusedOnMismatchAndFromAFreedSource(boolean peerCopy, Vertx vertx, VertxTestContext ctx) {
    DeviceClient a = client(vertx, 0);
    DeviceClient b = client(vertx, 1);
    DeviceNode.deploy(vertx, node(2, peerCopy))
      .compose(node -> Future.all(a.alloc(DType.F32, 64), b.alloc(DType.F32, 64), b.alloc(DType.I32, 64)))
      .compose(all -> {
        BufferHandle x = all.resultAt(0);
        BufferHandle y = all.resultAt(1);
        Future<BufferHandle> mismatch = a.copy(x, all.resultAt(2));
        return a.free(x).compose(v -> {
          Future<BufferHandle> freed = a.copy(x, y);
          return Future.join(mismatch, freed).otherwiseEmpty()
            .compose(v2 -> b.fill(y, 5)) // the target is not left held
            .compose(v2 -> b.downloadFloats(y))
            .map(read -> {
              assertEquals(FailureCode.BAD_REQUEST, ((CudaException) mismatch.cause()).code());
              assertEquals(FailureCode.NOT_FOUND, ((CudaException) freed.cause()).code());
              assertEquals(5f, read[63]);
              return read;
            });
        });
      })
      .onComplete(ctx.succeedingThenComplete());
  }

  /**
   * An abort of a direct copy that reaches the target before the copy's start waits for it; when the
   * start is then refused (its target is of another dtype than its source), the abort hears that
   * refusal at once (not TIMEOUT at its deadline), and the target serves on.
   */
  @Test
  void anAbortAheadOfARefusedStartHearsTheRefusal(Vertx vertx, VertxTestContext ctx) {
    DeviceClient a = client(vertx, 0);
    DeviceClient b = client(vertx, 1);
    long began = System.nanoTime();
    DeviceNode.deploy(vertx, node(2))
      .compose(node -> Future.all(a.alloc(DType.F32, 64), b.alloc(DType.F32, 64), b.alloc(DType.I32, 64)))
      .compose(all -> {
        BufferHandle x = all.resultAt(0);
        BufferHandle y = all.resultAt(1);
        BufferHandle wrong = all.resultAt(2);
        com.vertxcuda.internal.RequestSender target = new com.vertxcuda.internal.RequestSender(vertx,
          com.vertxcuda.Addresses.device(y.node(), y.device()), 20_000);
        long transfer = 0x5eed_c0deL;
        Future<Object> early = target.request(new com.vertxcuda.internal.CopyInAbort(wrong, transfer));
        Future<Object> start = target.request(new com.vertxcuda.internal.CopyInRequest(x, wrong, transfer));
        return Future.join(early, start).otherwiseEmpty()
          .compose(v -> b.fill(y, 3))
          .compose(v -> b.downloadFloats(y))
          .map(read -> {
            assertEquals(FailureCode.BAD_REQUEST, ((CudaException) start.cause()).code(), String.valueOf(start.cause()));
            CudaException abort = (CudaException) early.cause();
            assertEquals(FailureCode.BAD_REQUEST, abort.code(), abort.getMessage());
            assertTrue(abort.getMessage().contains("refused"), abort.getMessage());
            assertTrue(System.nanoTime() - began < 15_000_000_000L, "the abort waited for its deadline");
            assertEquals(3f, read[0]);
            return read;
          });
      })
      .onComplete(ctx.succeedingThenComplete());
  }

  /**
   * A direct copy's start holds its target until the source writes it; an abort (what the client
   * sends when the source refuses its side) gives that place up: the abort is answered with the
   * target, the start fails, and a fill queued behind the hold is served after. An abort that names
   * another target is refused and leaves the hold in place.
   */
  @Test
  void anAbortGivesUpTheTargetsPlace(Vertx vertx, VertxTestContext ctx) {
    DeviceClient a = client(vertx, 0);
    DeviceClient b = client(vertx, 1);
    DeviceNode.deploy(vertx, node(2))
      .compose(node -> Future.all(a.alloc(DType.F32, 64), b.alloc(DType.F32, 64), b.alloc(DType.F32, 64)))
      .compose(all -> {
        BufferHandle x = all.resultAt(0);
        BufferHandle y = all.resultAt(1);
        BufferHandle other = all.resultAt(2);
        com.vertxcuda.internal.RequestSender target = new com.vertxcuda.internal.RequestSender(vertx,
          com.vertxcuda.Addresses.device(y.node(), y.device()), 20_000);
        long transfer = 0xab0_27edL;
        List<String> answered = java.util.Collections.synchronizedList(new ArrayList<>());
        // No source side is sent: only the abort ends the start.
        Future<Object> start = target.request(new com.vertxcuda.internal.CopyInRequest(x, y, transfer))
          .onComplete(ar -> answered.add("start"));
        Future<Object> fill = target.request(com.vertxcuda.message.FillRequest.of(y, 3))
          .onComplete(ar -> answered.add("fill"));
        Future<Object> stray = target.request(new com.vertxcuda.internal.CopyInAbort(other, transfer))
          .onComplete(ar -> answered.add("stray"));
        return stray.otherwiseEmpty()
          .compose(v -> target.request(new com.vertxcuda.internal.CopyInAbort(y, transfer))
            .onComplete(ar -> answered.add("abort")))
          .compose(aborted -> Future.join(start, fill).otherwiseEmpty()
            .compose(v -> b.downloadFloats(y))
            .map(read -> {
              CudaException refused = (CudaException) stray.cause();
              assertEquals(FailureCode.BAD_REQUEST, refused.code(), refused.getMessage());
              assertEquals(y, aborted);
              CudaException startFailure = (CudaException) start.cause();
              assertEquals(FailureCode.BAD_REQUEST, startFailure.code(), startFailure.getMessage());
              assertTrue(startFailure.getMessage().contains("aborted"), startFailure.getMessage());
              assertTrue(fill.succeeded(), String.valueOf(fill.cause()));
              assertTrue(answered.indexOf("abort") < answered.indexOf("fill"), "the fill waited for the copy's place: "
                + answered);
              assertEquals(3f, read[0]);
              return read;
            }));
      })
      .onComplete(ctx.succeedingThenComplete());
  }

  /**
   * A staged copy's chunks are not turned away by the target's in-flight limit while requests wait
   * behind the copy's hold on its target: the copy completes, and every other request is answered
   * (served, or QUEUE_FULL at admission).
   */
  @Test
  void aCopysChunksPassTheTargetsInFlightLimit(Vertx vertx, VertxTestContext ctx) {
    DeviceClient a = client(vertx, 0);
    DeviceClient b = client(vertx, 1);
    NodeOptions options = node(2, false);
    // Room for the source's 16 reads (the fills, made on the copy's context, send them all at once);
    // on the target, the copy's start and the fills waiting behind its hold fill it.
    options.getDeviceOptions().setMaxInFlight(20);
    float[] data = random(16 * 1024, 7); // 64 KiB: 16 chunks of 4 KiB
    DeviceNode.deploy(vertx, options)
      .compose(node -> Future.all(a.alloc(DType.F32, data.length), b.alloc(DType.F32, data.length)))
      .compose(all -> {
        BufferHandle x = all.resultAt(0);
        BufferHandle y = all.resultAt(1);
        return a.upload(x, data).compose(v -> {
          Future<BufferHandle> copy = a.copy(x, y);
          List<Future<BufferHandle>> fills = new ArrayList<>();
          for (int i = 0; i < 24; i++) {
            fills.add(b.fill(y, 9));
          }
          List<Future<?>> every = new ArrayList<>(fills);
          every.add(copy);
          return Future.join(every).otherwiseEmpty().map(v2 -> {
            assertTrue(copy.succeeded(), "the copy failed: " + copy.cause());
            for (Future<BufferHandle> f : fills) {
              assertTrue(f.succeeded() || ((CudaException) f.cause()).code() == FailureCode.QUEUE_FULL,
                "a fill ended with " + f.cause());
            }
            return y;
          });
        });
      })
      .compose(y -> b.downloadFloats(y))
      .onComplete(ctx.succeeding(read -> ctx.verify(() -> {
        // Either the copy's bytes or a fill that followed it; never a mix of chunks and nothing.
        assertTrue(read[0] == 9f || read[0] == data[0], "y[0] = " + read[0]);
        ctx.completeNow();
      })));
  }

  /** Picks among a node's devices go through the cluster's placement policies, and spread. */
  @Test
  void placementSpreadsOverTheNodesDevices(Vertx vertx, VertxTestContext ctx) {
    int picks = 200;
    DeviceNode.deploy(vertx, node(4))
      .compose(node -> ready(vertx, 4))
      .compose(v -> {
        List<Future<DeviceClient>> rr = new ArrayList<>();
        List<Future<DeviceClient>> least = new ArrayList<>();
        for (int i = 0; i < picks; i++) {
          rr.add(DeviceClient.create(vertx, PlacementPolicy.roundRobin()));
          least.add(DeviceClient.create(vertx, PlacementPolicy.leastLoaded()));
        }
        return Future.all(Future.all(new ArrayList<>(rr)), Future.all(new ArrayList<>(least)))
          .map(x -> List.of(rr, least));
      })
      .onComplete(ctx.succeeding(both -> ctx.verify(() -> {
        for (List<Future<DeviceClient>> chosen : both) {
          Map<String, Integer> count = new HashMap<>();
          chosen.forEach(f -> count.merge(f.result().address(), 1, Integer::sum));
          assertEquals(4, count.size(), "every device chosen: " + count);
          for (int c : count.values()) {
            assertTrue(Math.abs(c - picks / 4) <= picks / 4 / 5, "within 20 % of an even share: " + count);
          }
        }
        ctx.completeNow();
      })));
  }

  private static Future<Void> ready(Vertx vertx, int n) {
    Promise<Void> done = Promise.promise();
    long[] timer = new long[1];
    timer[0] = vertx.setPeriodic(20, id -> DeviceRegistry.list(vertx).onSuccess(list -> {
      if (list.stream().filter(d -> d.getState() == DeviceState.READY).count() >= n && done.tryComplete()) {
        vertx.cancelTimer(timer[0]);
      }
    }));
    return done.future();
  }

  /**
   * Device 1 is poisoned (in process isolation: its device host killed with SIGKILL) while 200
   * requests are in flight on devices 0, 2 and 3 and a few on device 1: every request is answered
   * once; the others' all succeed and their buffers hold their last write; device 1's fail typed,
   * and it serves again under a new generation.
   */
  @Test
  void oneLostDeviceLeavesTheOthersServing(Vertx vertx, VertxTestContext ctx) {
    boolean process = TestDevices.isolation() == Isolation.PROCESS;
    int n = 4096;
    int inFlight = 200;
    List<DeviceClient> clients = new ArrayList<>();
    for (int d = 0; d < 4; d++) {
      clients.add(DeviceClient.create(vertx, new DeviceClientOptions().setDevice(d).setTimeout(20_000)));
    }
    DeviceClient lost = clients.get(1);
    List<DeviceClient> others = List.of(clients.get(0), clients.get(2), clients.get(3));
    SupervisionTest.ReplyLedger ledger = new SupervisionTest.ReplyLedger();
    SupervisionTest.ReplyLedger lostLedger = new SupervisionTest.ReplyLedger();
    Promise<DeviceEvent> rebuilt = Promise.promise();
    lost.events(e -> {
      if (e.getType() == DeviceEvent.Type.GENERATION_CHANGED) {
        rebuilt.tryComplete(e);
      }
    });
    List<BufferHandle> buffers = new ArrayList<>();
    long started = System.nanoTime();
    DeviceNode.deploy(vertx, node(4))
      .compose(node -> {
        List<Future<BufferHandle>> allocs = new ArrayList<>();
        clients.forEach(c -> allocs.add(c.alloc(DType.F32, n)));
        return Future.all(new ArrayList<>(allocs)).map(x -> {
          allocs.forEach(f -> buffers.add(f.result()));
          return x;
        });
      })
      .compose(x -> lost.describe())
      .compose(info -> {
        List<Future<?>> all = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
          all.add(lostLedger.track(lost.fill(buffers.get(1), i)));
        }
        Future<?> fault = process
          ? Future.succeededFuture(ProcessHandle.of(info.getPid()).map(ProcessHandle::destroyForcibly).orElse(false))
          : TestDevices.fault(vertx, lost.address(), FaultRequest.Kind.POISON).otherwiseEmpty();
        for (int i = 0; i < 10; i++) {
          all.add(lostLedger.track(lost.downloadFloats(buffers.get(1))));
        }
        for (int i = 0; i < inFlight; i++) {
          int k = i % 3;
          DeviceClient c = others.get(k);
          BufferHandle h = buffers.get(k == 0 ? 0 : k + 1);
          all.add(ledger.track(i % 2 == 0 ? c.fill(h, i).map(Object.class::cast) : c.downloadFloats(h).map(Object.class::cast)));
        }
        return Future.join(new ArrayList<>(all)).otherwiseEmpty().compose(v -> fault);
      })
      .compose(v -> {
        // The others' last writes: fills i = 198, 196 and 194 (one per device, in send order).
        List<Future<float[]>> reads = new ArrayList<>();
        for (int k = 0; k < 3; k++) {
          reads.add(others.get(k).downloadFloats(buffers.get(k == 0 ? 0 : k + 1)));
        }
        return Future.all(new ArrayList<>(reads)).map(x -> reads);
      })
      .compose(reads -> {
        long ms = (System.nanoTime() - started) / 1_000_000;
        assertEquals(inFlight, ledger.sent.get());
        assertEquals(inFlight, ledger.replies.get(), "every request answered once");
        assertEquals(inFlight, ledger.successes.get(), "the other devices served every request: " + ledger.failures);
        assertEquals(198f, reads.get(0).result()[0]);
        assertEquals(196f, reads.get(1).result()[n - 1]);
        assertEquals(194f, reads.get(2).result()[0]);
        assertEquals(20, lostLedger.replies.get(), "every request to the lost device answered once");
        for (FailureCode code : lostLedger.failures.keySet()) {
          assertTrue(code == FailureCode.CONTEXT_LOST || code == FailureCode.STALE_HANDLE, "typed: " + lostLedger.failures);
        }
        assertTrue(ms < 60_000, "took " + ms + " ms");
        return rebuilt.future();
      })
      .compose(e -> {
        assertTrue(e.getNewGeneration() > e.getOldGeneration());
        float[] values = random(n, 3);
        return lost.alloc(DType.F32, n).compose(h -> lost.upload(h, values)).compose(lost::downloadFloats)
          .map(read -> {
            assertArrayEquals(values, read, "the lost device serves again");
            return read;
          });
      })
      .onComplete(ctx.succeedingThenComplete());
  }
}
