package com.vertxcuda.bench.report;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.observability.DeviceMetrics;
import com.vertxcuda.observability.DeviceMetricsOptions;
import com.vertxcuda.observability.DeviceRequestTimer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A picture of the Grafana dashboard (docs/grafana-dashboard.json) over a real run: a device with the
 * observability module's meters (its request timer and phases, {@link DeviceMetrics} polled every
 * second, the GPU's NVML readings) under a load that changes every 15 s (small fills, then 2048³ and
 * 4096³ SGEMMs from more callers, then rest); the Prometheus text is scraped once a second and each
 * panel's query is evaluated over the scrapes as Prometheus would (rates and quantiles over a 5 s
 * window) and drawn, one chart per panel, two panels a row, into one PNG. The panels are checked
 * against the dashboard file's titles, so a changed dashboard fails here instead of drawing an old one.
 *
 * <p>Usage: {@code DashboardShot <dashboard.json> <out.png> [cuda|host] [seconds]}.
 */
public final class DashboardShot {

  private static final int WINDOW = 5;
  private static final Pattern LINE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})? (\\S+)$");
  private static final Pattern LABEL = Pattern.compile("([a-zA-Z_]+)=\"([^\"]*)\"");
  private static final int[] COLORS = {0x1F77B4, 0xD62728, 0x2CA02C, 0xFF7F0E, 0x9467BD, 0x8C564B, 0x17BECF, 0x7F7F7F};

  /** One sample: its metric name, labels and value. */
  private record Sample(String name, Map<String, String> labels, double value) {
  }

  private DashboardShot() {
  }

  public static void main(String[] args) throws Exception {
    JsonObject dashboard = new JsonObject(Files.readString(Path.of(args[0])));
    Path out = Path.of(args[1]);
    BackendKind backend = args.length > 2 && args[2].equals("host") ? BackendKind.HOST : BackendKind.CUDA;
    int seconds = args.length > 3 ? Integer.parseInt(args[3]) : 60;
    List<String> titles = new ArrayList<>();
    for (Object p : dashboard.getJsonArray("panels", new JsonArray())) {
      titles.add(((JsonObject) p).getString("title"));
    }
    Vertx vertx = Vertx.vertx();
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    List<List<Sample>> scrapes = new ArrayList<>();
    try {
      await(vertx.deployVerticle(new DeviceVerticle(new DeviceOptions().setBackend(backend).setGpuMetersInterval(500))
        .setRequestListener(DeviceRequestTimer.create(registry))));
      DeviceMetrics.create(vertx, registry, new DeviceMetricsOptions().setPollInterval(1_000));
      AtomicBoolean stop = new AtomicBoolean();
      int[] stage = {0};
      DeviceClient device = DeviceClient.create(vertx);
      BlasClient blas = BlasClient.create(vertx);
      int big = backend == BackendKind.CUDA ? 4096 : 256;
      int mid = backend == BackendKind.CUDA ? 2048 : 128;
      BufferHandle[] m = new BufferHandle[3];
      for (int i = 0; i < 3; i++) {
        m[i] = await(device.alloc(DType.F32, (long) big * big));
        await(device.fill(m[i], 1));
      }
      BufferHandle small = await(device.alloc(DType.F32, 256));
      // Eight callers; stage 0: two send fills, 1: four send 2048-GEMMs, 2: eight send 4096-GEMMs, 3: rest.
      for (int caller = 0; caller < 8; caller++) {
        int me = caller;
        vertx.runOnContext(v -> loop(vertx, stop, () -> switch (stage[0]) {
          case 0 -> me < 2 ? device.fill(small, me).mapEmpty() : null;
          case 1 -> me < 4 ? blas.gemm(Transpose.N, Transpose.N, mid, mid, mid, 1, m[0], mid, m[1], mid, 0, m[2], mid).mapEmpty() : null;
          case 2 -> blas.gemm(Transpose.N, Transpose.N, big, big, big, 1, m[0], big, m[1], big, 0, m[2], big).mapEmpty();
          default -> null;
        }));
      }
      for (int t = 0; t < seconds; t++) {
        stage[0] = Math.min(3, t * 4 / seconds);
        Thread.sleep(1_000);
        scrapes.add(parse(registry.scrape()));
      }
      stop.set(true);
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    List<Chart> panels = panels(scrapes, backend.name().toLowerCase());
    List<String> drawn = panels.stream().map(c -> c.title).toList();
    if (!drawn.equals(titles)) {
      throw new IllegalStateException("the dashboard's panels " + titles + " are not the ones drawn " + drawn);
    }
    int w = Chart.WIDTH;
    int h = 540;
    RasterCanvas canvas = new RasterCanvas(2 * w, ((panels.size() + 1) / 2) * h);
    for (int i = 0; i < panels.size(); i++) {
      panels.get(i).draw(new Offset(canvas, (i % 2) * w, (i / 2) * h, w, h));
    }
    Files.write(out, canvas.png());
    System.out.println("[dashboard] " + panels.size() + " panels over " + scrapes.size() + " scrapes (" + backend + ") -> " + out);
  }

  // Sends what {@code next} makes one after another until {@code stop}; none to make: waits 50 ms.
  private static void loop(Vertx vertx, AtomicBoolean stop, java.util.function.Supplier<Future<Void>> next) {
    if (stop.get()) {
      return;
    }
    Future<Void> f = next.get();
    if (f == null) {
      vertx.setTimer(50, id -> loop(vertx, stop, next));
    } else {
      f.onComplete(ar -> loop(vertx, stop, next));
    }
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  private static List<Sample> parse(String text) {
    List<Sample> samples = new ArrayList<>();
    for (String line : text.split("\n")) {
      Matcher m = LINE.matcher(line);
      if (line.startsWith("#") || !m.matches()) {
        continue;
      }
      Map<String, String> labels = new TreeMap<>();
      if (m.group(3) != null) {
        Matcher l = LABEL.matcher(m.group(3));
        while (l.find()) {
          labels.put(l.group(1), l.group(2));
        }
      }
      samples.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(4))));
    }
    return samples;
  }

  /** The dashboard's panels, in its order, each its query over the scrapes. */
  private static List<Chart> panels(List<List<Sample>> s, String backend) {
    String note = "one device (" + backend + "); scraped every second, rates over " + WINDOW + " s";
    Axis time = new Axis("seconds", Axis.Scale.LINEAR, Axis.Format.NUMBER);
    List<Chart> c = new ArrayList<>();
    c.add(chart("Requests per second by device and outcome", note, time, Axis.Format.RATE,
      rates(s, "vertxcuda_device_request_seconds_count", "code")));
    List<Chart.Line> latency = new ArrayList<>();
    latency.add(quantile(s, "vertxcuda_device_request_seconds_bucket", 0.5, null, "p50", 0));
    latency.add(quantile(s, "vertxcuda_device_request_seconds_bucket", 0.99, null, "p99", 1));
    c.add(chart("Request latency p50 / p99 (admission to answer)", note, time, Axis.Format.MILLISECONDS, latency));
    c.add(chart("Mean time per phase by operation (queue, stream wait, GPU, copy)", note, time, Axis.Format.MILLISECONDS,
      means(s)));
    List<Chart.Line> p99 = new ArrayList<>();
    int i = 0;
    for (String phase : List.of("queue", "stream_wait", "gpu", "copy")) {
      p99.add(quantile(s, "vertxcuda_device_request_phase_seconds_bucket", 0.99, phase, phase, i++));
    }
    c.add(chart("p99 per phase", note, time, Axis.Format.MILLISECONDS, p99));
    c.add(chart("Queue depth: in flight and waiting for a context", note, time, Axis.Format.NUMBER,
      present(gauge(s, "vertxcuda_device_requests_inflight", "in flight", 0, 1),
        gauge(s, "vertxcuda_device_requests_queued", "queued", 1, 1))));
    c.add(chart("Device memory held by buffers", note, time, Axis.Format.BYTES,
      present(gauge(s, "vertxcuda_device_memory_used_bytes", "used", 0, 1))));
    c.add(chart("GPU utilisation (NVML)", note, time, Axis.Format.NUMBER,
      present(gauge(s, "vertxcuda_gpu_utilization_percent", "utilisation %", 0, 1))));
    c.add(chart("GPU power (NVML)", note, time, Axis.Format.NUMBER,
      present(gauge(s, "vertxcuda_gpu_power_watts", "watts", 0, 1))));
    return c;
  }

  // The lines that have data (a gauge no scrape holds is null).
  private static List<Chart.Line> present(Chart.Line... lines) {
    return java.util.Arrays.stream(lines).filter(java.util.Objects::nonNull).toList();
  }

  private static Chart chart(String title, String note, Axis time, Axis.Format format, List<Chart.Line> lines) {
    List<Chart.Line> drawn = lines.stream().filter(l -> l != null && l.xs().length > 0).toList();
    // Every panel's value axis starts at 0, as Grafana's do (a flat gauge would otherwise fill the panel).
    return Chart.lines(title.replace(' ', '-'), title, drawn.isEmpty() ? note + "; no data (no NVML here)" : note,
      time, new Axis("", Axis.Scale.LINEAR, format), drawn, List.of(new Chart.Rule(0, "")));
  }

  private static double sum(List<Sample> scrape, String name, Predicate<Sample> which) {
    double v = 0;
    for (Sample x : scrape) {
      if (x.name.equals(name) && which.test(x)) {
        v += x.value;
      }
    }
    return v;
  }

  // Per second over the window, summed by {@code by}: one line per value of it.
  private static List<Chart.Line> rates(List<List<Sample>> s, String name, String by) {
    java.util.Set<String> values = new java.util.TreeSet<>();
    s.forEach(scrape -> scrape.stream().filter(x -> x.name.equals(name)).forEach(x -> values.add(x.labels.get(by))));
    List<Chart.Line> lines = new ArrayList<>();
    int k = 0;
    for (String v : values) {
      lines.add(series(s, k++, by + "=" + v, t -> (sum(s.get(t), name, x -> v.equals(x.labels.get(by)))
        - sum(s.get(t - WINDOW), name, x -> v.equals(x.labels.get(by)))) / WINDOW));
    }
    return lines;
  }

  // Mean of each phase's time (s → ms) by operation and phase, over the window.
  private static List<Chart.Line> means(List<List<Sample>> s) {
    java.util.Set<String> keys = new java.util.TreeSet<>();
    s.forEach(scrape -> scrape.stream().filter(x -> x.name.equals("vertxcuda_device_request_phase_seconds_count"))
      .forEach(x -> keys.add(x.labels.get("operation") + " " + x.labels.get("phase"))));
    List<Chart.Line> lines = new ArrayList<>();
    int k = 0;
    for (String key : keys) {
      Predicate<Sample> is = x -> key.equals(x.labels.get("operation") + " " + x.labels.get("phase"));
      lines.add(series(s, k++, key, t -> {
        double n = sum(s.get(t), "vertxcuda_device_request_phase_seconds_count", is)
          - sum(s.get(t - WINDOW), "vertxcuda_device_request_phase_seconds_count", is);
        double total = sum(s.get(t), "vertxcuda_device_request_phase_seconds_sum", is)
          - sum(s.get(t - WINDOW), "vertxcuda_device_request_phase_seconds_sum", is);
        return n == 0 ? Double.NaN : total / n * 1e3;
      }));
    }
    return lines;
  }

  // Prometheus's histogram_quantile over the window's bucket increases (s → ms); {@code phase} null: all.
  private static Chart.Line quantile(List<List<Sample>> s, String name, double q, String phase, String label, int k) {
    return series(s, k, label, t -> {
      TreeMap<Double, Double> buckets = new TreeMap<>();
      for (int end : new int[] {t, t - WINDOW}) {
        for (Sample x : s.get(end)) {
          if (x.name.equals(name) && (phase == null || phase.equals(x.labels.get("phase")))) {
            String le = x.labels.get("le");
            double bound = le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
            buckets.merge(bound, end == t ? x.value : -x.value, Double::sum);
          }
        }
      }
      if (buckets.isEmpty() || buckets.lastEntry().getValue() <= 0) {
        return Double.NaN;
      }
      double rank = q * buckets.lastEntry().getValue();
      double lower = 0;
      double below = 0;
      for (Map.Entry<Double, Double> b : buckets.entrySet()) {
        if (b.getValue() >= rank) {
          if (b.getKey().isInfinite()) {
            return lower * 1e3;
          }
          double within = b.getValue() - below;
          return (lower + (b.getKey() - lower) * (within == 0 ? 1 : (rank - below) / within)) * 1e3;
        }
        lower = b.getKey();
        below = b.getValue();
      }
      return Double.NaN;
    });
  }

  private static Chart.Line gauge(List<List<Sample>> s, String name, String label, int k, double scale) {
    if (s.stream().noneMatch(scrape -> scrape.stream().anyMatch(x -> x.name.equals(name)))) {
      return null;
    }
    return series(s, k, label, t -> sum(s.get(t), name, x -> true) * scale);
  }

  private static Chart.Line series(List<List<Sample>> s, int k, String label, java.util.function.IntToDoubleFunction at) {
    List<Double> xs = new ArrayList<>();
    List<Double> ys = new ArrayList<>();
    for (int t = WINDOW; t < s.size(); t++) {
      double v = at.applyAsDouble(t);
      if (!Double.isNaN(v)) {
        xs.add((double) t + 1);
        ys.add(v);
      }
    }
    return new Chart.Line(label, COLORS[k % COLORS.length], null, 2,
      xs.stream().mapToDouble(Double::doubleValue).toArray(), ys.stream().mapToDouble(Double::doubleValue).toArray());
  }

  /** A panel's place on the picture: draws shifted by ({@code dx}, {@code dy}) in a {@code w}×{@code h} frame. */
  private record Offset(Canvas to, double dx, double dy, int width, int height) implements Canvas {

    @Override
    public void fill(double x, double y, double w, double h, int rgb) {
      to.fill(x + dx, y + dy, w, h, rgb);
    }

    @Override
    public void stroke(double[] xs, double[] ys, double w, int rgb, double[] dash) {
      double[] x2 = xs.clone();
      double[] y2 = ys.clone();
      for (int i = 0; i < x2.length; i++) {
        x2[i] += dx;
        y2[i] += dy;
      }
      to.stroke(x2, y2, w, rgb, dash);
    }

    @Override
    public void dot(double x, double y, double radius, int rgb) {
      to.dot(x + dx, y + dy, radius, rgb);
    }

    @Override
    public void text(String text, double x, double y, TextStyle style) {
      to.text(text, x + dx, y + dy, style);
    }
  }
}
