package com.vertxcuda.samples.bench.report;

import com.vertxcuda.samples.bench.result.BenchRecord;
import com.vertxcuda.samples.bench.result.Series;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The report's derived figures from results made up to have known answers. */
class FiguresTest {

  @Test
  void crossoverIsTheSizeFromWhichTheToolkitStaysWithinFivePercent(@TempDir Path dir) throws Exception {
    BenchRecord raw = new BenchRecord("BenchMain", "a", "cuda", "full");
    BenchRecord toolkit = new BenchRecord("BenchMain", "a", "cuda", "full");
    double[] sizes = {64, 256, 1024, 4096};
    gemm(raw, "raw-jcuda", "FP32", sizes, 10, 20, 100, 1000);
    gemm(toolkit, "vertx.in_process", "FP32", sizes, 30, 21, 104, 1010);
    gemm(raw, "raw-jcuda", "TF32", sizes, 10, 20, 100, 1000);
    gemm(toolkit, "vertx.in_process", "TF32", sizes, 30, 35, 110, 1060);
    raw.write(dir.resolve("raw.json"));
    toolkit.write(dir.resolve("toolkit.json"));
    List<Figures.Crossover> c = Figures.crossovers(Results.load(List.of(dir)));
    assertEquals(2, c.size());
    // 3, 1.05, 1.04, 1.01: within 5 % from 256 on.
    assertEquals(256.0, c.get(0).from());
    assertEquals(1.01, c.get(0).ratioAtLargest(), 1e-9);
    // TF32 ends at 1.06: never within.
    assertNull(c.get(1).from());
  }

  @Test
  void ratiosCountRatesTheOtherWayRound(@TempDir Path dir) throws Exception {
    BenchRecord r = new BenchRecord("BenchMain", "a", "cuda", "full");
    r.series("smallgemm.batch", "raw-jcuda", "one thread", "rate", "1/s", "GEMMs per message", "").add(1, 10, 0, 60_000);
    r.series("smallgemm.batch", "vertx.in_process", "1 event loop", "rate", "1/s", "GEMMs per message", "")
      .add(1, 10, 0, 30_000);
    r.write(dir.resolve("r.json"));
    Figures.Row row = Figures.headlines(Results.load(List.of(dir))).stream()
      .filter(h -> h.label().equals("64x64 GEMMs, one per message")).findFirst().orElseThrow();
    assertEquals(2.0, row.ratio("vertx.in_process", "raw-jcuda"), 1e-9, "half the rate costs twice as much");
  }

  private static void gemm(BenchRecord r, String path, String precision, double[] sizes, double... micros) {
    Series s = r.series("gemm.latency", path, precision, "time", "us", "m = n = k", "");
    for (int i = 0; i < sizes.length; i++) {
      s.add(sizes[i], 10, 3, micros[i]);
    }
  }
}
