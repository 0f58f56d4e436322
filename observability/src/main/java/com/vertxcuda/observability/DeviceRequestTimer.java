package com.vertxcuda.observability;

import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.RequestPhases;
import com.vertxcuda.internal.RequestTrace;
import com.vertxcuda.device.RequestListener;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The latency of every request a device answers, from admission to answer, as the Micrometer timer
 * {@code vertxcuda.device.request} tagged {@code device} (address), {@code library} ("memory" for the
 * device's own requests: alloc, upload, download...) and {@code code} ("OK" or the failure code), with
 * a percentile histogram. Install it on the node that serves the device:
 *
 * <pre>new DeviceVerticle(options).setRequestListener(DeviceRequestTimer.create(registry))</pre>
 *
 * Needs vertx-cuda-device on the class path (an optional dependency of this module). The timers are
 * made once per device, library and code; recording allocates nothing of its own. It also asks the
 * device to measure each request's phases and records them ({@link #phases}).
 */
public final class DeviceRequestTimer implements RequestListener {

  private static final Library[] LIBRARIES = Library.values();
  private static final FailureCode[] CODES = FailureCode.values();

  private final MeterRegistry registry;
  private final Map<String, Timer[]> timers = new ConcurrentHashMap<>();

  private DeviceRequestTimer(MeterRegistry registry) {
    this.registry = registry;
  }

  public static DeviceRequestTimer create(MeterRegistry registry) {
    return new DeviceRequestTimer(registry);
  }

  @Override
  public void answered(String address, Library library, FailureCode code, long nanos) {
    Timer[] byOutcome = timers.get(address);
    if (byOutcome == null) {
      byOutcome = timers.computeIfAbsent(address, a -> new Timer[(LIBRARIES.length + 1) * (CODES.length + 1)]);
    }
    int i = (library == null ? 0 : library.ordinal() + 1) * (CODES.length + 1) + (code == null ? 0 : code.ordinal() + 1);
    Timer timer = byOutcome[i];
    if (timer == null) {
      // Racing threads get the same timer: the registry returns the one already registered.
      timer = Timer.builder("vertxcuda.device.request").description("device requests from admission to answer")
        .tags("device", address, "library", library == null ? "memory" : library.name().toLowerCase(),
          "code", code == null ? "OK" : code.name())
        .publishPercentileHistogram().register(registry);
      byOutcome[i] = timer;
    }
    timer.record(nanos, TimeUnit.NANOSECONDS);
  }

  /** The device measures each request's phases for this listener. */
  @Override
  public boolean wantsPhases() {
    return true;
  }

  /**
   * Records the phases of a request as the timer {@code vertxcuda.device.request.phase} tagged
   * {@code device}, {@code operation} ("gemm", "upload", "fill"...) and {@code phase}: {@code queue}
   * (admission until the submission thread took it up), {@code stream_wait} (queued on its stream
   * until the stream began it), {@code gpu} (a library's execution) or {@code copy} (a memory
   * request's copy or fill); a phase that was not measured is not recorded.
   */
  @Override
  public void phases(String address, Library library, Object body, FailureCode code, RequestPhases phases) {
    String operation = RequestTrace.operation(body);
    Map<String, Timer[]> byOperation = phaseTimers.get(address);
    if (byOperation == null) {
      byOperation = phaseTimers.computeIfAbsent(address, a -> new ConcurrentHashMap<>());
    }
    Timer[] byPhase = byOperation.get(operation);
    if (byPhase == null) {
      byPhase = byOperation.computeIfAbsent(operation, k -> {
        Timer[] t = new Timer[PHASES.length];
        for (int i = 0; i < PHASES.length; i++) {
          t[i] = Timer.builder("vertxcuda.device.request.phase").description("where device requests spend their time")
            .tags("device", address, "operation", operation, "phase", PHASES[i])
            .publishPercentileHistogram().register(registry);
        }
        return t;
      });
    }
    record(byPhase[0], phases.getQueueNanos());
    record(byPhase[1], phases.getStreamWaitNanos());
    record(byPhase[2], phases.getGpuNanos());
    record(byPhase[3], phases.getCopyNanos());
  }

  private static void record(Timer timer, long nanos) {
    if (nanos >= 0) {
      timer.record(nanos, TimeUnit.NANOSECONDS);
    }
  }

  /** The phases' tag values, in the order {@link #phases} records them. */
  private static final String[] PHASES = {"queue", "stream_wait", "gpu", "copy"};
  /** By device address, then operation. */
  private final Map<String, Map<String, Timer[]>> phaseTimers = new ConcurrentHashMap<>();
}
