package com.vertxcuda.bench.report;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.CRC32;
import java.util.zip.Deflater;

/**
 * A canvas of RGB pixels on white, drawn with anti-aliasing from the distance to each shape (text
 * from the glyph atlas), java.base only: the GPU bundle's runtime has no java.desktop. {@link #png()}
 * encodes it.
 */
final class RasterCanvas implements Canvas {

  private final int width;
  private final int height;
  private final int[] pixels;
  /** A stroke's coverage per pixel, so that its segments' overlaps at joints are not blended twice. */
  private final float[] cover;

  RasterCanvas(int width, int height) {
    this.width = width;
    this.height = height;
    this.pixels = new int[width * height];
    this.cover = new float[width * height];
    Arrays.fill(pixels, 0xFFFFFF);
  }

  @Override
  public int width() {
    return width;
  }

  @Override
  public int height() {
    return height;
  }

  /** The colour at a pixel, 0xRRGGBB. */
  int pixel(int x, int y) {
    return pixels[y * width + x];
  }

  @Override
  public void fill(double x, double y, double w, double h, int rgb) {
    int x0 = clampX((int) Math.round(x));
    int x1 = clampX((int) Math.round(x + w));
    int y0 = clampY((int) Math.round(y));
    int y1 = clampY((int) Math.round(y + h));
    for (int py = y0; py < y1; py++) {
      Arrays.fill(pixels, py * width + x0, py * width + x1, rgb & 0xFFFFFF);
    }
  }

  @Override
  public void stroke(double[] xs, double[] ys, double w, int rgb, double[] dash) {
    double r = w / 2;
    int[] box = {width, height, -1, -1};
    int dashIndex = 0;
    double dashLeft = dash == null ? Double.MAX_VALUE : dash[0];
    for (int i = 1; i < xs.length; i++) {
      double x = xs[i - 1];
      double y = ys[i - 1];
      double length = Math.hypot(xs[i] - x, ys[i] - y);
      double done = 0;
      while (done < length) {
        double step = Math.min(length - done, dashLeft);
        double f0 = done / length;
        double f1 = (done + step) / length;
        if (dashIndex % 2 == 0) {
          cover(x + (xs[i] - x) * f0, y + (ys[i] - y) * f0, x + (xs[i] - x) * f1, y + (ys[i] - y) * f1, r, box);
        }
        done += step;
        dashLeft -= step;
        if (dashLeft <= 1e-9 && dash != null) {
          dashIndex = (dashIndex + 1) % dash.length;
          dashLeft = dash[dashIndex];
        }
      }
    }
    for (int py = box[1]; py <= box[3]; py++) {
      for (int px = box[0]; px <= box[2]; px++) {
        int i = py * width + px;
        if (cover[i] > 0) {
          blend(i, rgb, cover[i]);
          cover[i] = 0;
        }
      }
    }
  }

  /** Coverage of a segment with round ends, kept as the most of any segment of this stroke. */
  private void cover(double x1, double y1, double x2, double y2, double r, int[] box) {
    int bx0 = clampX((int) Math.floor(Math.min(x1, x2) - r - 1));
    int bx1 = clampX((int) Math.ceil(Math.max(x1, x2) + r + 1)) - 1;
    int by0 = clampY((int) Math.floor(Math.min(y1, y2) - r - 1));
    int by1 = clampY((int) Math.ceil(Math.max(y1, y2) + r + 1)) - 1;
    double dx = x2 - x1;
    double dy = y2 - y1;
    double len2 = dx * dx + dy * dy;
    for (int py = by0; py <= by1; py++) {
      for (int px = bx0; px <= bx1; px++) {
        double cx = px + 0.5;
        double cy = py + 0.5;
        double t = len2 == 0 ? 0 : Math.max(0, Math.min(1, ((cx - x1) * dx + (cy - y1) * dy) / len2));
        double d = Math.hypot(cx - (x1 + t * dx), cy - (y1 + t * dy));
        float c = (float) Math.max(0, Math.min(1, r + 0.5 - d));
        int i = py * width + px;
        if (c > cover[i]) {
          cover[i] = c;
        }
      }
    }
    box[0] = Math.min(box[0], bx0);
    box[1] = Math.min(box[1], by0);
    box[2] = Math.max(box[2], bx1);
    box[3] = Math.max(box[3], by1);
  }

  @Override
  public void dot(double x, double y, double radius, int rgb) {
    for (int py = clampY((int) (y - radius - 1)); py < clampY((int) (y + radius + 2)); py++) {
      for (int px = clampX((int) (x - radius - 1)); px < clampX((int) (x + radius + 2)); px++) {
        double d = Math.hypot(px + 0.5 - x, py + 0.5 - y);
        double c = Math.max(0, Math.min(1, radius + 0.5 - d));
        if (c > 0) {
          blend(py * width + px, rgb, c);
        }
      }
    }
  }

  @Override
  public void text(String text, double x, double y, TextStyle style) {
    Glyphs.Face face = Glyphs.face(style.size(), style.bold());
    double w = face.width(text);
    double start = style.anchor() == Anchor.START ? 0 : style.anchor() == Anchor.MIDDLE ? w / 2 : w;
    double pen = -start;
    for (int i = 0; i < text.length(); i++) {
      Glyphs.Glyph g = face.glyph(text.charAt(i));
      int penAt = (int) Math.round(pen);
      for (int gy = 0; gy < g.height(); gy++) {
        for (int gx = 0; gx < g.width(); gx++) {
          int a = g.alpha()[gy * g.width() + gx] & 0xFF;
          if (a == 0) {
            continue;
          }
          // Along the text: penAt + g.x + gx; across it (down the glyph): g.y + gy.
          int along = penAt + g.x() + gx;
          int across = g.y() + gy;
          int px = style.vertical() ? (int) Math.round(x) + across : (int) Math.round(x) + along;
          int py = style.vertical() ? (int) Math.round(y) - along : (int) Math.round(y) + across;
          if (px >= 0 && px < width && py >= 0 && py < height) {
            blend(py * width + px, style.rgb(), a / 255.0);
          }
        }
      }
      pen += g.advance();
    }
  }

  private void blend(int i, int rgb, double c) {
    int bg = pixels[i];
    int r = mix((bg >> 16) & 0xFF, (rgb >> 16) & 0xFF, c);
    int g = mix((bg >> 8) & 0xFF, (rgb >> 8) & 0xFF, c);
    int b = mix(bg & 0xFF, rgb & 0xFF, c);
    pixels[i] = (r << 16) | (g << 8) | b;
  }

  private static int mix(int from, int to, double c) {
    return (int) Math.round(from + (to - from) * c);
  }

  private int clampX(int x) {
    return Math.max(0, Math.min(width, x));
  }

  private int clampY(int y) {
    return Math.max(0, Math.min(height, y));
  }

  /** The canvas as a PNG file (8-bit RGB, each row filtered by its difference to the one above). */
  byte[] png() {
    byte[] raw = new byte[height * (1 + 3 * width)];
    int o = 0;
    for (int y = 0; y < height; y++) {
      raw[o++] = 2; // filter: Up
      for (int x = 0; x < width; x++) {
        int p = pixels[y * width + x];
        int above = y == 0 ? 0 : pixels[(y - 1) * width + x];
        raw[o++] = (byte) (((p >> 16) & 0xFF) - ((above >> 16) & 0xFF));
        raw[o++] = (byte) (((p >> 8) & 0xFF) - ((above >> 8) & 0xFF));
        raw[o++] = (byte) ((p & 0xFF) - (above & 0xFF));
      }
    }
    Deflater deflater = new Deflater(9);
    deflater.setInput(raw);
    deflater.finish();
    ByteArrayOutputStream idat = new ByteArrayOutputStream();
    byte[] chunk = new byte[1 << 16];
    while (!deflater.finished()) {
      idat.write(chunk, 0, deflater.deflate(chunk));
    }
    deflater.end();
    ByteArrayOutputStream png = new ByteArrayOutputStream();
    png.writeBytes(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'});
    ByteBuffer header = ByteBuffer.allocate(13).putInt(width).putInt(height)
      .put((byte) 8).put((byte) 2).put((byte) 0).put((byte) 0).put((byte) 0);
    chunk(png, "IHDR", header.array());
    chunk(png, "IDAT", idat.toByteArray());
    chunk(png, "IEND", new byte[0]);
    return png.toByteArray();
  }

  private static void chunk(ByteArrayOutputStream out, String type, byte[] data) {
    CRC32 crc = new CRC32();
    byte[] t = type.getBytes(StandardCharsets.US_ASCII);
    crc.update(t);
    crc.update(data);
    out.writeBytes(ByteBuffer.allocate(4).putInt(data.length).array());
    out.writeBytes(t);
    out.writeBytes(data);
    out.writeBytes(ByteBuffer.allocate(4).putInt((int) crc.getValue()).array());
  }
}
