package com.vertxcuda.bench.report;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** One axis of a chart: its title, log or linear scale, how its ticks read, and the ticks for a range. */
record Axis(String title, Axis.Scale scale, Axis.Format format) {

  /** {@code NINES}: fractions spaced by their nines (0, 90 %, 99 %, 99.9 %...), so a distribution's tail shows. */
  enum Scale { LINEAR, LOG, NINES }

  /** The most nines a fraction counts for (a fraction of 1 sits there). */
  private static final double MOST_NINES = 5;

  /** How values on the axis read. */
  enum Format { NUMBER, BYTES, POWER_OF_TWO, MICROSECONDS, MILLISECONDS, NANOSECONDS, RATE, FRACTION, RATIO }

  /** The ticks for data from {@code lo} to {@code hi}; the first and last bound the axis. */
  List<Double> ticks(double lo, double hi) {
    List<Double> t = new ArrayList<>();
    if (scale == Scale.NINES) {
      t.add(0.0);
      for (int n = 1; n <= MOST_NINES; n++) {
        t.add(1 - Math.pow(10, -n));
        if (nines(t.get(t.size() - 1)) >= nines(hi) - 1e-9) {
          break;
        }
      }
      return t;
    }
    if (scale == Scale.LOG) {
      lo = Math.max(lo, Double.MIN_NORMAL);
      hi = Math.max(hi, lo);
      if (format == Format.BYTES || format == Format.POWER_OF_TWO) {
        int k0 = (int) Math.floor(log2(lo) + 1e-9);
        int k1 = (int) Math.ceil(log2(hi) - 1e-9);
        int step = 1;
        for (int s : new int[] {1, 2, 4, 5, 10}) {
          step = s;
          if ((k1 - k0) / s <= 8) {
            break;
          }
        }
        int start = Math.floorDiv(k0, step) * step;
        int end = Math.max(start + step, -Math.floorDiv(-k1, step) * step);
        for (int k = start; k <= end; k += step) {
          t.add(Math.pow(2, k));
        }
        return t;
      }
      int d0 = (int) Math.floor(Math.log10(lo) + 1e-9);
      int d1 = Math.max(d0 + 1, (int) Math.ceil(Math.log10(hi) - 1e-9));
      int every = Math.max(1, (d1 - d0 + 7) / 8);
      for (int d = d0; d <= d1; d += every) {
        t.add(Math.pow(10, d));
        if (d1 - d0 <= 2 && d < d1) {
          t.add(2 * Math.pow(10, d));
          t.add(5 * Math.pow(10, d));
        }
      }
      return t;
    }
    if (hi <= lo) {
      hi = lo + 1;
    }
    double raw = (hi - lo) / 6;
    double mag = Math.pow(10, Math.floor(Math.log10(raw)));
    double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
    double first = Math.floor(lo / step) * step;
    for (double v = first; v < hi + step * 0.999; v += step) {
      t.add(Math.abs(v) < step * 1e-9 ? 0 : v);
    }
    return t;
  }

  /** Where {@code v} lies between {@code lo} and {@code hi} on this axis, 0 to 1. */
  double fraction(double v, double lo, double hi) {
    if (scale == Scale.NINES) {
      return (nines(v) - nines(lo)) / (nines(hi) - nines(lo));
    }
    if (scale == Scale.LOG) {
      return (Math.log(Math.max(v, Double.MIN_NORMAL)) - Math.log(lo)) / (Math.log(hi) - Math.log(lo));
    }
    return (v - lo) / (hi - lo);
  }

  String label(double v) {
    switch (format) {
      case BYTES:
        return bytes(v);
      case POWER_OF_TWO:
        return v < 100_000 ? number(v) : "2^" + Math.round(log2(v));
      case MICROSECONDS:
        return v < 1e3 ? number(v) + " \u00b5s" : v < 1e6 ? number(v / 1e3) + " ms" : number(v / 1e6) + " s";
      case MILLISECONDS:
        return v < 1e3 ? number(v) + " ms" : number(v / 1e3) + " s";
      case NANOSECONDS:
        return v < 1e3 ? number(v) + " ns" : v < 1e6 ? number(v / 1e3) + " \u00b5s" : number(v / 1e6) + " ms";
      case RATE:
        return v >= 1e9 ? number(v / 1e9) + "G" : v >= 1e6 ? number(v / 1e6) + "M" : v >= 1e3 ? number(v / 1e3) + "k"
          : number(v);
      case FRACTION:
        return new BigDecimal(v * 100).round(new MathContext(6)).stripTrailingZeros()
          .toPlainString() + " %";
      case RATIO:
        return number(v) + "\u00d7";
      default:
        return number(v);
    }
  }

  static String bytes(double v) {
    String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return number(v) + " " + units[u];
  }

  /** At most three significant digits, no trailing zeros. */
  static String number(double v) {
    if (v == 0) {
      return "0";
    }
    double a = Math.abs(v);
    String s = a >= 100 ? String.format(Locale.ROOT, "%.0f", v) : a >= 10 ? String.format(Locale.ROOT, "%.1f", v)
      : a >= 1 ? String.format(Locale.ROOT, "%.2f", v) : String.format(Locale.ROOT, "%.3g", v);
    return s.contains(".") && !s.contains("e") ? s.replaceAll("0+$", "").replaceAll("\\.$", "") : s;
  }

  /** How many nines a fraction has: 0 for 0, 1 for 90 %, 2 for 99 %... */
  private static double nines(double f) {
    return Math.min(MOST_NINES, -Math.log10(Math.max(1 - f, Math.pow(10, -MOST_NINES))));
  }

  private static double log2(double v) {
    return Math.log(v) / Math.log(2);
  }
}
