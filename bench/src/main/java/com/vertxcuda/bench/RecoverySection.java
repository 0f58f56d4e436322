package com.vertxcuda.bench;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.bench.result.Series;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.message.FaultRequest;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import org.HdrHistogram.Histogram;

import static com.vertxcuda.bench.Await.await;

/**
 * Sweep {@code recovery}: from a fault to a ready device — the generation-changed event, then the
 * first request served on the new context. Faults: kill -9 of the device host (process isolation
 * only) and a poisoned context (a sticky error, injected: on cuda a kernel that stores through a
 * bad address). In process isolation with and without a spare device host; in-process only on the
 * host backend (on cuda a sticky error ends the process's use of the GPU: no rebuild).
 */
final class RecoverySection implements Section {

  static final String SWEEP = "recovery";

  /** The faults, in the order of the sweep's x. */
  enum Fault {
    KILL("kill -9"), POISON("poison");

    final String label;

    Fault(String label) {
      this.label = label;
    }
  }

  @Override
  public String name() {
    return "recovery";
  }

  @Override
  public void alone(Bench bench, DeviceOptions options) throws Exception {
    if (options.getIsolation() == Isolation.PROCESS) {
      for (boolean spare : new boolean[] {false, true}) {
        measure(bench, options, "vertx.process", spare, Fault.values());
      }
      return;
    }
    bench.record.skip(SWEEP, "vertx.in_process", "kill -9 needs a device host (process isolation)");
    if (options.getBackend() == BackendKind.CUDA) {
      bench.record.skip(SWEEP, "vertx.in_process", "poison: in-process on cuda a sticky error ends the process's "
        + "use of the GPU (no rebuild; process isolation rebuilds)");
      return;
    }
    measure(bench, options, "vertx.in_process", false, Fault.POISON);
  }

  private static void measure(Bench bench, DeviceOptions base, String path, boolean spare, Fault... faults)
    throws Exception {
    Series s = bench.record.series(SWEEP, path, spare ? "spare device host" : path.equals("vertx.process")
      ? "no spare" : "rebuilt in-process", "recovery", "ms", "fault", "");
    if (!bench.inBudget(SWEEP, path, s.variant())) {
      return;
    }
    DeviceOptions options = new DeviceOptions(base).setFaultInjection(true).setSpareDeviceHost(spare)
      .setRestartLimit(1_000);
    try (DeployedDevice d = DeployedDevice.deploy(options)) {
      for (Fault fault : faults) {
        Histogram toEvent = Histograms.create();
        Histogram toServed = Histograms.create();
        for (int k = 0; k < bench.sizes.recoveries(); k++) {
          DeployedDevice.awaitSpare(d.device, options);
          once(d, fault, toEvent, toServed);
        }
        JsonObject p = s.add(fault.ordinal(), toServed.getTotalCount(), 0, Histograms.p50(toServed) / 1e6)
          .put("label", fault.label).put("latency", Histograms.latency(toServed, "ms", false))
          .put("extra", new JsonObject().put("toEventMs", Series.round(Histograms.p50(toEvent) / 1e6)));
        bench.progress("%-22s %-18s %-18s %8s: generation changed after %.0f ms, first request served after %.0f ms "
          + "(median of %d)", SWEEP, path, s.variant(), fault.label, Histograms.p50(toEvent) / 1e6,
          p.getDouble("value"), toServed.getTotalCount());
      }
    }
  }

  /** One fault: from making it to the generation-changed event, and to the first request served after. */
  private static void once(DeployedDevice d, Fault fault, Histogram toEvent, Histogram toServed) throws Exception {
    DeviceInfo info = await(d.device.describe());
    Promise<DeviceEvent> changed = Promise.promise();
    MessageConsumer<DeviceEvent> events = d.device.events(e -> {
      if (e.getType() == DeviceEvent.Type.GENERATION_CHANGED) {
        changed.tryComplete(e);
      }
    });
    await(events.completion());
    long t0 = System.nanoTime();
    if (fault == Fault.KILL) {
      ProcessHandle.of(info.getPid()).ifPresent(ProcessHandle::destroyForcibly);
    } else {
      // Answered CONTEXT_LOST (the context it poisoned is gone): only the event and the next request count.
      new RequestSender(d.vertx, d.device.address(), 30_000).request(new FaultRequest(FaultRequest.Kind.POISON));
    }
    await(changed.future());
    toEvent.recordValue(System.nanoTime() - t0);
    BufferHandle h = await(d.device.alloc(DType.F32, 1));
    toServed.recordValue(System.nanoTime() - t0);
    await(d.device.free(h));
    await(events.unregister());
  }
}
