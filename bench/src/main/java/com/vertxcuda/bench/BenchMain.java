package com.vertxcuda.bench;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.bench.result.BenchRecord;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.device.cuda.CudaBackend;
import com.vertxcuda.device.cuda.CudaUnavailableException;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

import static com.vertxcuda.bench.Await.await;

/**
 * The benchmark: every sweep of one isolation mode in one JVM run — raw JCuda (on cuda, in the
 * in_process run) and the toolkit as deployed — into one JSON file ({@code bench/SCHEMA.md}),
 * with a progress line per point. BenchReport turns one or more such files (both modes, PyTorch's,
 * JMH's) into Markdown, HTML and PNG charts.
 *
 * <p>{@code BenchMain --backend host --mode in_process --size small --out DIR} runs in seconds
 * without a GPU; the bundle's bench stage runs {@code --size full} once per mode on the GPU. See
 * {@link BenchOptions#USAGE}.
 */
public final class BenchMain {

  /**
   * Every section, in the order the toolkit's run them; raw JCuda's run in the reverse order
   * ({@link #rawPhase}), so the first sections here have their raw rows and the toolkit's nearest in
   * time: the GPU-bound one-at-a-time points first. A GPU's clock under load is a property of the
   * minute (a GPU may cap its power, and so its clock, during a long large GEMM): with minutes between
   * a raw section and its toolkit section, the comparison would measure the clock, not the toolkit.
   */
  private static final List<Section> ALL = List.of(new GemmSection(), new FftRngSection(), new SmallGemmSection(),
    new HopsSection(), new LibraryHopsSection(), new PayloadSection(), new ConcurrencySection(), new GraphSection(),
    new CopySection(), new LargeCopySection(), new AllocSection(), new RecoverySection(), new TracingSection());
  /** The names {@code --only} takes. */
  static final List<String> SECTIONS = ALL.stream().map(Section::name).toList();

  private BenchMain() {
  }

  public static void main(String[] args) throws Exception {
    BenchOptions options;
    try {
      options = BenchOptions.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    JsonObject result = run(options, args);
    System.exit(failures(result) == 0 ? 0 : 1);
  }

  /** Sections whose measuring failed (each noted in the record's skipped list). */
  public static long failures(JsonObject result) {
    return result.getJsonArray("skipped").stream().map(JsonObject.class::cast)
      .filter(s -> s.getString("reason").startsWith("failed")).count();
  }

  /** Runs what {@code options} say, writes {@code bench-<mode>.json} and returns it. */
  public static JsonObject run(BenchOptions options, String... args) throws Exception {
    BackendKind backend = resolve(options.backend());
    SweepSizes sizes = options.size() != null ? SweepSizes.named(options.size())
      : backend == BackendKind.CUDA ? SweepSizes.FULL : SweepSizes.SMALL;
    BenchRecord record = new BenchRecord("BenchMain", options.commit(), backend.name().toLowerCase(Locale.ROOT), sizes.name());
    record.run().put("isolation", options.modeName()).put("arguments", new JsonArray(List.of(args)))
      .put("transport", DeployedDevice.transportName())
      .put("jvmArguments", new JsonArray(ManagementFactory.getRuntimeMXBean().getInputArguments()));
    Path file = options.out().resolve("bench-" + options.modeName() + ".json");
    Bench bench = new Bench(record, sizes, options.budgetSeconds() > 0 ? options.budgetSeconds() : sizes.budgetSeconds(),
      file);
    bench.progress("backend %s, mode %s, sizes %s, output %s", backend, options.modeName(), sizes.name(), options.out());
    List<Section> sections = new ArrayList<>();
    ALL.stream().filter(s -> options.runs(s.name())).forEach(sections::add);

    DeviceOptions deviceOptions = new DeviceOptions().setBackend(backend).setIsolation(options.mode())
      .setHostMemory(3L << 30).setSharedMemorySize(2047L << 20);
    String hostJvm = System.getProperty("vertxcuda.bench.deviceHostJvmOptions");
    if (hostJvm != null) { // profiles of the device host (run.sh profile)
      deviceOptions.setDeviceHostJvmOptions(List.of(hostJvm.split(" ")));
    }
    // The request path's spin (DeviceOptions.submissionSpin, µs), to measure what it buys (-1: the default).
    deviceOptions.setSubmissionSpin(Integer.getInteger("vertxcuda.bench.submissionSpin", -1));
    // How often a waiting caller's event loop wakes itself (DeviceOptions.callerWake, µs; -1: the default).
    deviceOptions.setCallerWake(Integer.getInteger("vertxcuda.bench.callerWake", -1));
    boolean inProcess = options.mode() == Isolation.IN_PROCESS;
    if (backend != BackendKind.CUDA) {
      record.skip("all", "raw-jcuda", "raw JCuda needs the cuda backend");
    } else if (!inProcess) {
      record.skip("all", "raw-jcuda", "raw JCuda runs in the in_process run (BenchReport compares across files)");
    } else if (!options.raw()) {
      record.skip("all", "raw-jcuda", "--no-raw");
    } else {
      guard(bench, "all", "raw-jcuda", () -> rawPhase(bench, sections));
    }
    for (Section s : sections) {
      guard(bench, s.name(), "vertx." + options.modeName(), () -> s.firstUse(bench, deviceOptions));
    }
    if (inProcess) {
      for (Section s : sections) {
        guard(bench, s.name(), "context", () -> s.belowTheVerticle(bench, deviceOptions));
      }
    }
    guard(bench, "all", "vertx." + options.modeName(), () -> toolkitPhase(bench, sections, deviceOptions));
    for (Section s : sections) {
      guard(bench, s.name(), "vertx." + options.modeName(), () -> s.alone(bench, deviceOptions));
    }
    record.write(file);
    JsonObject json = record.toJson();
    bench.progress("wrote %s: %d series, %d skipped (%d failed), %.1f s", file, json.getJsonArray("series").size(),
      json.getJsonArray("skipped").size(), failures(json), json.getJsonObject("run").getDouble("wallSeconds"));
    return json;
  }

  private static BackendKind resolve(BackendKind asked) throws CudaUnavailableException {
    if (asked == BackendKind.HOST) {
      return BackendKind.HOST;
    }
    try {
      CudaBackend.load(new DeviceOptions().setBackend(BackendKind.CUDA));
      return BackendKind.CUDA;
    } catch (CudaUnavailableException e) {
      if (asked == BackendKind.CUDA) {
        throw e;
      }
      System.out.println("no usable GPU, host backend: " + e.getMessage());
      return BackendKind.HOST;
    }
  }

  /** Raw JCuda's rows, the sections in the reverse of the toolkit's order ({@link #ALL}). */
  private static void rawPhase(Bench bench, List<Section> sections) throws Exception {
    try (RawJCuda raw = RawJCuda.open()) {
      List<Section> reversed = new ArrayList<>(sections);
      Collections.reverse(reversed);
      for (Section s : reversed) {
        guard(bench, s.name(), "raw-jcuda", () -> s.raw(bench, raw));
      }
    }
  }

  private static void toolkitPhase(Bench bench, List<Section> sections, DeviceOptions options) throws Exception {
    try (DeployedDevice d = DeployedDevice.deploy(options)) {
      bench.record.run().put("device", new JsonObject().put("name", d.info.getName())
        .put("computeCapability", d.info.getComputeCapability()).put("pid", d.info.getPid()));
      bench.progress("device %s (%s), %s backend, %s", d.info.getName(), d.info.getComputeCapability(),
        d.info.getBackend(), d.path);
      warmUp(bench, d);
      for (Section s : sections) {
        guard(bench, s.name(), d.path, () -> s.toolkit(bench, d));
      }
    }
  }

  private interface Step {
    void run() throws Exception;
  }

  /**
   * Runs one section's part; a failure is noted in the record (and the run goes on with the next).
   * The file is written after each, so a run stopped from outside still leaves what it measured.
   */
  private static void guard(Bench bench, String section, String path, Step step) {
    try {
      step.run();
    } catch (Exception | Error e) {
      bench.record.skip(section, path, "failed: " + e);
      bench.progress("%s %s failed: %s", section, path, e);
      e.printStackTrace(System.out);
    }
    bench.save();
  }

  /**
   * Small uploads, downloads and fills through the paths the sweeps take, so the JIT has compiled
   * them as in an application that has been running (a cold path adds to each large copy's time).
   */
  private static void warmUp(Bench bench, DeployedDevice d) throws Exception {
    BufferHandle h = await(d.device.alloc(DType.U8, 64 << 10));
    Buffer data = d.verticle.allocateTransferBuffer(64 << 10);
    data.appendBytes(new byte[64 << 10]);
    for (int round = 0; round < bench.sizes.warmUpRounds(); round++) {
      List<Future<?>> wave = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        wave.add(d.device.upload(h, data));
        wave.add(d.device.download(h).map(d.verticle::releaseTransferBuffer));
        wave.add(d.device.fill(h, i));
      }
      await(Future.all(wave));
    }
    d.verticle.releaseTransferBuffer(data);
    await(d.device.free(h));
    bench.progress("warmed up: %d rounds of 24 small requests", bench.sizes.warmUpRounds());
  }
}
