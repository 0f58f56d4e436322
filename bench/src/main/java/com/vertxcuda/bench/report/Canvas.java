package com.vertxcuda.bench.report;

/**
 * What a chart draws on: an SVG document for the HTML report, a raster for the PNG copies. Colours
 * are 0xRRGGBB; text sits on its baseline at {@code y}.
 */
interface Canvas {

  /** Where text's {@code x} is: its start, middle or end. */
  enum Anchor { START, MIDDLE, END }

  /** How text looks. {@code vertical}: turned a quarter anticlockwise, read from bottom to top. */
  record TextStyle(int size, boolean bold, int rgb, Anchor anchor, boolean vertical) {

    static TextStyle of(int size, int rgb, Anchor anchor) {
      return new TextStyle(size, false, rgb, anchor, false);
    }
  }

  int width();

  int height();

  void fill(double x, double y, double w, double h, int rgb);

  /** A polyline {@code width} wide; {@code dash} null for solid, otherwise on/off lengths. */
  void stroke(double[] xs, double[] ys, double width, int rgb, double[] dash);

  void dot(double x, double y, double radius, int rgb);

  void text(String text, double x, double y, TextStyle style);

  /** The width {@code text} takes, for layout. */
  default double textWidth(String text, int size, boolean bold) {
    return Glyphs.face(size, bold).width(text);
  }
}
