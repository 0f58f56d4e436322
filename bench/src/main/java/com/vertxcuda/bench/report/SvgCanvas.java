package com.vertxcuda.bench.report;

import java.util.Locale;

/** A canvas that writes SVG elements, for inlining in the HTML report (no script, no external font). */
final class SvgCanvas implements Canvas {

  private final int width;
  private final int height;
  private final StringBuilder body = new StringBuilder();

  SvgCanvas(int width, int height) {
    this.width = width;
    this.height = height;
  }

  @Override
  public int width() {
    return width;
  }

  @Override
  public int height() {
    return height;
  }

  @Override
  public void fill(double x, double y, double w, double h, int rgb) {
    body.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>%n",
      x, y, w, h, color(rgb)));
  }

  @Override
  public void stroke(double[] xs, double[] ys, double w, int rgb, double[] dash) {
    StringBuilder points = new StringBuilder();
    for (int i = 0; i < xs.length; i++) {
      points.append(String.format(Locale.ROOT, "%s%.1f,%.1f", i == 0 ? "" : " ", xs[i], ys[i]));
    }
    StringBuilder dashes = new StringBuilder();
    if (dash != null) {
      dashes.append(" stroke-dasharray=\"");
      for (int i = 0; i < dash.length; i++) {
        dashes.append(String.format(Locale.ROOT, "%s%.1f", i == 0 ? "" : " ", dash[i]));
      }
      dashes.append('"');
    }
    body.append(String.format(Locale.ROOT, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\""
      + " stroke-linejoin=\"round\" stroke-linecap=\"round\"%s/>%n", points, color(rgb), w, dashes));
  }

  @Override
  public void dot(double x, double y, double radius, int rgb) {
    body.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"/>%n", x, y, radius,
      color(rgb)));
  }

  @Override
  public void text(String text, double x, double y, TextStyle style) {
    String anchor = switch (style.anchor()) {
      case START -> "start";
      case MIDDLE -> "middle";
      case END -> "end";
    };
    String turn = style.vertical() ? String.format(Locale.ROOT, " transform=\"rotate(-90 %.1f %.1f)\"", x, y) : "";
    body.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\"%s text-anchor=\"%s\" fill=\"%s\"%s>"
      + "%s</text>%n", x, y, style.size(), style.bold() ? " font-weight=\"bold\"" : "", anchor, color(style.rgb()), turn,
      escape(text)));
  }

  /** The whole document. */
  String svg() {
    return String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
      + " font-family=\"DejaVu Sans, Verdana, Arial, sans-serif\">%n%s</svg>%n", width, height, width, height, body);
  }

  static String escape(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
  }

  private static String color(int rgb) {
    return String.format("#%06x", rgb & 0xFFFFFF);
  }
}
