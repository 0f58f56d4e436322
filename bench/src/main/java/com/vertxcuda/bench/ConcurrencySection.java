package com.vertxcuda.bench;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.bench.result.Series;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;

import static com.vertxcuda.bench.Await.await;

/**
 * Sweeps {@code concurrency.inflight} and {@code concurrency.eventloops}: 1 KiB fills with many in
 * flight, each on its own buffer (so none waits for another's write), a completed request's slot
 * taking the next at once. Latency per request and requests per second, against requests in flight
 * from one event loop and against event loops with {@code inFlightPerLoop} each. Raw JCuda has no
 * counterpart (one thread, one stream): its 1-in-flight figure is the hop sweep's.
 */
final class ConcurrencySection implements Section {

  @Override
  public String name() {
    return "concurrency";
  }

  @Override
  public void raw(Bench bench, RawJCuda raw) {
    bench.record.skip("concurrency.inflight", "raw-jcuda", "no counterpart: raw JCuda is one thread on one stream "
      + "(roundtrip.fill has its one-in-flight figure)");
  }

  @Override
  public void toolkit(Bench bench, DeployedDevice d) throws Exception {
    SweepSizes sizes = bench.sizes;
    int most = Math.max(sizes.inFlight().stream().mapToInt(Integer::intValue).max().orElse(1),
      sizes.eventLoops().stream().mapToInt(Integer::intValue).max().orElse(1) * sizes.inFlightPerLoop());
    List<BufferHandle> slots = new ArrayList<>();
    for (int i = 0; i < most; i++) {
      slots.add(await(d.device.alloc(DType.U8, 1024)));
    }
    Series inFlight = bench.record.series("concurrency.inflight", d.path, "fill 1 KiB, 1 event loop", "latency", "us",
      "requests in flight", "");
    for (int k : sizes.inFlight()) {
      if (!bench.inBudget(inFlight.sweep(), d.path, k + " in flight")) {
        break;
      }
      point(bench, d, inFlight, k, slots, 1, k);
    }
    Series loops = bench.record.series("concurrency.eventloops", d.path,
      "fill 1 KiB, " + sizes.inFlightPerLoop() + " in flight per loop", "latency", "us", "event loops", "");
    for (int l : sizes.eventLoops()) {
      if (!bench.inBudget(loops.sweep(), d.path, l + " event loops")) {
        break;
      }
      point(bench, d, loops, l, slots, l, sizes.inFlightPerLoop());
    }
    for (BufferHandle h : slots) {
      await(d.device.free(h));
    }
  }

  private static void point(Bench bench, DeployedDevice d, Series s, int x, List<BufferHandle> slots, int loops,
                            int perLoop) throws Exception {
    int total = bench.sizes.concurrencyRequests();
    int warmup = Math.max(2 * loops * perLoop, total / 10);
    closedLoop(d, slots, loops, perLoop, warmup);
    long t0 = System.nanoTime();
    Histogram h = closedLoop(d, slots, loops, perLoop, total);
    long nanos = System.nanoTime() - t0;
    JsonObject p = bench.latency(s, x, loops + " x " + perLoop, new Plan(warmup, total), h, false);
    double rate = total / (nanos / 1e9);
    p.put("extra", new JsonObject().put("rate", Series.round(rate)).put("inFlight", loops * perLoop)
      .put("eventLoops", loops));
    bench.progress("%-22s %-18s %-10s %12s: %,12.0f requests/s", s.sweep(), s.path(), "", loops + " x " + perLoop, rate);
  }

  /** {@code total} fills from {@code loops} event loops, {@code perLoop} in flight on each; every one's latency. */
  private static Histogram closedLoop(DeployedDevice d, List<BufferHandle> slots, int loops, int perLoop, int total)
    throws Exception {
    List<Future<Histogram>> all = new ArrayList<>();
    for (int l = 0; l < loops; l++) {
      int quota = total / loops + (l < total % loops ? 1 : 0);
      // From a thread outside Vert.x, each new context is on the next event loop in turn.
      Context context = d.vertx.getOrCreateContext();
      List<BufferHandle> mine = slots.subList(l * perLoop, (l + 1) * perLoop);
      Promise<Histogram> done = Promise.promise();
      context.runOnContext(v -> new Loop(d, mine, quota, done).start());
      all.add(done.future());
    }
    Histogram h = Histograms.create();
    for (Future<Histogram> f : all) {
      h.add(await(f));
    }
    return h;
  }

  /** One event loop's share: a slot whose request completed makes the next; on that event loop only. */
  private static final class Loop {
    private final DeployedDevice d;
    private final List<BufferHandle> slots;
    private final int quota;
    private final Promise<Histogram> done;
    private final Histogram h = Histograms.create();
    private int sent;
    private int completed;

    Loop(DeployedDevice d, List<BufferHandle> slots, int quota, Promise<Histogram> done) {
      this.d = d;
      this.slots = slots;
      this.quota = quota;
      this.done = done;
    }

    void start() {
      if (quota == 0) {
        done.complete(h);
      }
      for (int i = 0; i < slots.size(); i++) {
        issue(i);
      }
    }

    private void issue(int slot) {
      if (sent == quota) {
        return;
      }
      int n = sent++;
      long t0 = System.nanoTime();
      d.device.fillInteger(slots.get(slot), n & 0x7F).onComplete(ar -> {
        if (ar.failed()) {
          done.tryFail(ar.cause());
          return;
        }
        h.recordValue(Math.max(1, System.nanoTime() - t0));
        if (++completed == quota) {
          done.complete(h);
        } else {
          issue(slot);
        }
      });
    }
  }
}
