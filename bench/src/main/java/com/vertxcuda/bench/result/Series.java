package com.vertxcuda.bench.result;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigDecimal;
import java.math.MathContext;
import java.util.Arrays;

/** One line of a chart: the points one path measured over one sweep (see {@link BenchRecord}). */
public final class Series {

  private final JsonObject json;
  private final JsonArray points = new JsonArray();

  Series(String sweep, String path, String variant, String kind, String unit, String xName, String xUnit) {
    json = new JsonObject().put("sweep", sweep).put("path", path).put("variant", variant).put("kind", kind)
      .put("unit", unit).put("x", new JsonObject().put("name", xName).put("unit", xUnit)).put("points", points);
  }

  JsonObject json() {
    return json;
  }

  public String sweep() {
    return json.getString("sweep");
  }

  public String path() {
    return json.getString("path");
  }

  public String variant() {
    return json.getString("variant");
  }

  /** One point: {@code value} at {@code x} from {@code runs} timed runs after {@code warmup} untimed ones. */
  public JsonObject add(double x, long runs, long warmup, double value) {
    if (!Double.isFinite(value) || !Double.isFinite(x) || runs < 1) {
      throw new IllegalArgumentException("not a figure: x " + x + ", value " + value + ", runs " + runs);
    }
    JsonObject p = new JsonObject().put("x", x).put("runs", runs).put("warmup", warmup).put("value", round(value));
    points.add(p);
    return p;
  }

  /**
   * One point measured {@code repeats.length} times in one run (the measurement repeated, not the
   * JVM): the median as its {@code value}, every repeat's figure in {@code repeats}, in the order made.
   */
  public JsonObject add(double x, long runs, long warmup, double[] repeats) {
    JsonObject p = add(x, runs, warmup, median(repeats));
    JsonArray each = new JsonArray();
    for (double v : repeats) {
      each.add(round(v));
    }
    return p.put("repeats", each);
  }

  /** The middle value (the mean of the middle two of an even count). */
  public static double median(double[] values) {
    if (values.length == 0) {
      throw new IllegalArgumentException("no values");
    }
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int m = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2;
  }

  public int size() {
    return points.size();
  }

  /** Four significant digits: what a benchmark figure can claim. */
  public static double round(double v) {
    if (v == 0) {
      return v;
    }
    return new BigDecimal(v).round(new MathContext(4)).doubleValue();
  }
}
