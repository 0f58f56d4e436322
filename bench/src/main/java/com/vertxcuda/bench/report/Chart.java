package com.vertxcuda.bench.report;

import com.vertxcuda.bench.report.Canvas.Anchor;
import com.vertxcuda.bench.report.Canvas.TextStyle;

import java.util.ArrayList;
import java.util.List;

/**
 * One chart of the report, drawn the same on any canvas: lines over two axes (log or linear), or
 * horizontal bars in groups, with reference rules, a legend and values at the bars' ends.
 */
final class Chart {

  static final int WIDTH = 960;
  private static final int LINES_HEIGHT = 540;
  private static final int INK = 0x222222;
  private static final int MUTED = 0x666666;
  private static final int GRID = 0xE6E6E6;
  private static final int FRAME = 0x999999;
  private static final double[] RULE_DASH = {6, 4};
  private static final int BAR = 12;
  private static final int CATEGORY_GAP = 14;

  /** A line of points, in data units. */
  record Line(String label, int rgb, double[] dash, double width, double[] xs, double[] ys) {
  }

  /** A reference at {@code value} on the value axis (y for lines, x for bars). */
  record Rule(double value, String label) {
  }

  /** One bar per category, NaN where the group has none. */
  record Group(String label, int rgb, double[] values) {
  }

  final String name;
  final String title;
  final String note;
  private final Axis x;
  private final Axis y;
  private final List<Line> lines;
  private final List<Rule> rules;
  private final List<String> categories;
  private final List<Group> groups;

  private Chart(String name, String title, String note, Axis x, Axis y, List<Line> lines, List<Rule> rules,
                List<String> categories, List<Group> groups) {
    this.name = name;
    this.title = title;
    this.note = note;
    this.x = x;
    this.y = y;
    this.lines = lines;
    this.rules = rules;
    this.categories = categories;
    this.groups = groups;
  }

  static Chart lines(String name, String title, String note, Axis x, Axis y, List<Line> lines, List<Rule> rules) {
    return new Chart(name, title, note, x, y, lines, rules, List.of(), List.of());
  }

  /** Horizontal bars: a band per category, a bar per group in it; {@code value} is the horizontal axis. */
  static Chart bars(String name, String title, String note, Axis value, List<String> categories, List<Group> groups,
                    List<Rule> rules) {
    return new Chart(name, title, note, value, null, List.of(), rules, categories, groups);
  }

  boolean isEmpty() {
    return lines.isEmpty() && (categories.isEmpty() || groups.isEmpty());
  }

  int height() {
    return y != null ? LINES_HEIGHT : 110 + categories.size() * (groups.size() * (BAR + 2) + CATEGORY_GAP);
  }

  /** The chart as an SVG document. */
  String svg() {
    SvgCanvas canvas = new SvgCanvas(WIDTH, height());
    draw(canvas);
    return canvas.svg();
  }

  /** The chart as a PNG file. */
  byte[] png() {
    RasterCanvas canvas = new RasterCanvas(WIDTH, height());
    draw(canvas);
    return canvas.png();
  }

  void draw(Canvas c) {
    c.fill(0, 0, c.width(), c.height(), 0xFFFFFF);
    c.text(title, 20, 28, new TextStyle(16, true, INK, Anchor.START, false));
    if (note != null && !note.isEmpty()) {
      c.text(note, 20, 46, TextStyle.of(11, MUTED, Anchor.START));
    }
    List<String> legend = new ArrayList<>();
    List<Integer> colors = new ArrayList<>();
    List<double[]> dashes = new ArrayList<>();
    if (y != null) {
      lines.forEach(l -> {
        legend.add(l.label());
        colors.add(l.rgb());
        dashes.add(l.dash());
      });
    } else {
      groups.forEach(g -> {
        legend.add(g.label());
        colors.add(g.rgb());
        dashes.add(null);
      });
    }
    double legendWidth = Math.min(280, 48 + legend.stream().mapToDouble(s -> c.textWidth(s, 11, false)).max().orElse(0));
    double right = c.width() - legendWidth - 16;
    drawLegend(c, right + 14, 64, legend, colors, dashes, legendWidth - 14, y == null);
    if (y != null) {
      drawLines(c, 86, 62, right, c.height() - 58);
    } else {
      double labels = Math.min(340, categories.stream().mapToDouble(s -> c.textWidth(s, 11, false)).max().orElse(0));
      drawBars(c, 28 + labels, 62, right, c.height() - 48);
    }
  }

  private void drawLines(Canvas c, double left, double top, double right, double bottom) {
    double[] xr = range(x, true);
    double[] yr = range(y, false);
    List<Double> xt = x.ticks(xr[0], xr[1]);
    List<Double> yt = y.ticks(yr[0], yr[1]);
    double x0 = xt.get(0);
    double x1 = xt.get(xt.size() - 1);
    double y0 = yt.get(0);
    double y1 = yt.get(yt.size() - 1);
    horizontalTicks(c, xt, left, top, right, bottom);
    for (double t : yt) {
      double py = bottom - y.fraction(t, y0, y1) * (bottom - top);
      c.stroke(new double[] {left, right}, new double[] {py, py}, 1, GRID, null);
      c.text(y.label(t), left - 6, py + 4, TextStyle.of(11, MUTED, Anchor.END));
    }
    frame(c, left, top, right, bottom);
    c.text(x.title(), (left + right) / 2, bottom + 38, TextStyle.of(13, INK, Anchor.MIDDLE));
    c.text(y.title(), 22, (top + bottom) / 2, new TextStyle(13, false, INK, Anchor.MIDDLE, true));
    for (Rule r : rules) {
      double py = bottom - y.fraction(r.value(), y0, y1) * (bottom - top);
      if (py >= top && py <= bottom) {
        c.stroke(new double[] {left, right}, new double[] {py, py}, 1.2, MUTED, RULE_DASH);
        c.text(r.label(), right - 4, py - 4, TextStyle.of(11, MUTED, Anchor.END));
      }
    }
    for (Line l : lines) {
      List<double[]> pts = new ArrayList<>();
      for (int i = 0; i < l.xs().length; i++) {
        if (drawable(x, l.xs()[i]) && drawable(y, l.ys()[i])) {
          pts.add(new double[] {left + x.fraction(l.xs()[i], x0, x1) * (right - left),
            bottom - y.fraction(l.ys()[i], y0, y1) * (bottom - top)});
        }
      }
      double[] xs = pts.stream().mapToDouble(p -> p[0]).toArray();
      double[] ys = pts.stream().mapToDouble(p -> p[1]).toArray();
      if (xs.length > 1) {
        c.stroke(xs, ys, l.width(), l.rgb(), l.dash());
      }
      if (l.dash() == null) {
        for (int i = 0; i < xs.length; i++) {
          c.dot(xs[i], ys[i], xs.length > 40 ? 1.2 : 2.6, l.rgb());
        }
      }
    }
  }

  private void drawBars(Canvas c, double left, double top, double right, double bottom) {
    double[] vr = range(x, false);
    if (x.scale() == Axis.Scale.LINEAR) {
      vr[0] = Math.min(0, vr[0]);
    }
    List<Double> t = x.ticks(vr[0], vr[1] * (x.scale() == Axis.Scale.LINEAR ? 1.08 : 1.6));
    double v0 = t.get(0);
    double v1 = t.get(t.size() - 1);
    horizontalTicks(c, t, left, top, right, bottom);
    frame(c, left, top, right, bottom);
    c.text(x.title(), (left + right) / 2, bottom + 36, TextStyle.of(13, INK, Anchor.MIDDLE));
    double band = groups.size() * (BAR + 2) + CATEGORY_GAP;
    for (int i = 0; i < categories.size(); i++) {
      double y0 = top + 8 + i * band;
      c.text(categories.get(i), left - 8, y0 + groups.size() * (BAR + 2) / 2.0 + 4, TextStyle.of(11, INK, Anchor.END));
      for (int g = 0; g < groups.size(); g++) {
        double v = groups.get(g).values()[i];
        if (!drawable(x, v)) {
          continue;
        }
        double end = left + Math.max(1, x.fraction(v, v0, v1) * (right - left));
        double by = y0 + g * (BAR + 2);
        c.fill(left, by, end - left, BAR, groups.get(g).rgb());
        c.text(x.label(v), end + 4, by + BAR - 2, TextStyle.of(11, MUTED, Anchor.START));
      }
    }
    for (Rule r : rules) {
      double px = left + x.fraction(r.value(), v0, v1) * (right - left);
      c.stroke(new double[] {px, px}, new double[] {top, bottom}, 1.2, MUTED, RULE_DASH);
      c.text(r.label(), px, top - 4, TextStyle.of(11, MUTED, Anchor.MIDDLE));
    }
  }

  /** The horizontal axis' grid lines and labels; its first and last tick bound it. */
  private void horizontalTicks(Canvas c, List<Double> ticks, double left, double top, double right, double bottom) {
    double first = ticks.get(0);
    double last = ticks.get(ticks.size() - 1);
    for (double t : ticks) {
      double px = left + x.fraction(t, first, last) * (right - left);
      c.stroke(new double[] {px, px}, new double[] {top, bottom}, 1, GRID, null);
      c.text(x.label(t), px, bottom + 16, TextStyle.of(11, MUTED, Anchor.MIDDLE));
    }
  }

  private static void frame(Canvas c, double left, double top, double right, double bottom) {
    c.stroke(new double[] {left, right, right, left, left}, new double[] {top, top, bottom, bottom, top}, 1, FRAME,
      null);
  }

  /** The legend: a line of each line's look, or ({@code swatches}) a square of each bar group's colour. */
  private static void drawLegend(Canvas c, double x, double y, List<String> labels, List<Integer> colors,
                                 List<double[]> dashes, double width, boolean swatches) {
    for (int i = 0; i < labels.size(); i++) {
      double row = y + i * 18;
      if (swatches) {
        c.fill(x + 6, row - 10, 12, 12, colors.get(i));
      } else {
        c.stroke(new double[] {x, x + 24}, new double[] {row - 4, row - 4}, dashes.get(i) == null ? 3 : 2,
          colors.get(i), dashes.get(i));
      }
      c.text(fit(c, labels.get(i), width - 32), x + 30, row, TextStyle.of(11, INK, Anchor.START));
    }
  }

  private static String fit(Canvas c, String s, double width) {
    if (c.textWidth(s, 11, false) <= width) {
      return s;
    }
    while (s.length() > 1 && c.textWidth(s + "\u2026", 11, false) > width) {
      s = s.substring(0, s.length() - 1);
    }
    return s + "\u2026";
  }

  /** The data's extent on an axis ({@code horizontal}: the lines' x; otherwise their y, or the bars' values). */
  private double[] range(Axis a, boolean horizontal) {
    double lo = Double.MAX_VALUE;
    double hi = -Double.MAX_VALUE;
    List<double[]> all = new ArrayList<>();
    if (y != null) {
      lines.forEach(l -> all.add(horizontal ? l.xs() : l.ys()));
      if (!horizontal) {
        all.add(rules.stream().mapToDouble(Rule::value).toArray());
      }
    } else {
      groups.forEach(g -> all.add(g.values()));
      all.add(rules.stream().mapToDouble(Rule::value).toArray());
    }
    for (double[] vs : all) {
      for (double v : vs) {
        if (drawable(a, v)) {
          lo = Math.min(lo, v);
          hi = Math.max(hi, v);
        }
      }
    }
    if (lo > hi) {
      return new double[] {1, 10};
    }
    return new double[] {lo, hi};
  }

  private static boolean drawable(Axis a, double v) {
    return Double.isFinite(v) && (a.scale() != Axis.Scale.LOG || v > 0);
  }
}
