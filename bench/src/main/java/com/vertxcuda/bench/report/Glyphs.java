package com.vertxcuda.bench.report;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;

/**
 * The charts' text: a glyph atlas of DejaVu Sans made once with Java2D ({@code GlyphAtlasWriter} in
 * the tests), so that charts need no fonts and no java.desktop where they are drawn — the GPU bundle's
 * runtime has neither. Widths lay out both the SVG and the raster; alpha masks draw the raster.
 */
final class Glyphs {

  static final int MAGIC = 0x56434731;
  /** Printable ASCII and the few signs the charts use. */
  static final String CHARS = printableAscii() + "\u00b5\u00d7\u2192\u2264\u2265\u2013\u2014\u00b7\u2026";

  /** One glyph: advance, the mask's offset from the pen on the baseline, its size and coverage (0-255). */
  record Glyph(float advance, int x, int y, int width, int height, byte[] alpha) {
  }

  /** One face: pixel size, weight, ascent and descent above and below the baseline. */
  record Face(int size, boolean bold, int ascent, int descent, Map<Character, Glyph> glyphs) {

    Glyph glyph(char c) {
      Glyph g = glyphs.get(c);
      return g != null ? g : glyphs.get('?');
    }

    double width(String text) {
      double w = 0;
      for (int i = 0; i < text.length(); i++) {
        w += glyph(text.charAt(i)).advance();
      }
      return w;
    }
  }

  /** Loaded when first drawn with (the atlas writer uses {@link #CHARS} before there is an atlas). */
  private static final class Atlas {
    static final List<Face> FACES = load();
  }

  private Glyphs() {
  }

  /** The face closest to {@code size} of that weight. */
  static Face face(int size, boolean bold) {
    Face best = null;
    for (Face f : Atlas.FACES) {
      if (f.bold() == bold && (best == null || Math.abs(f.size() - size) < Math.abs(best.size() - size))) {
        best = f;
      }
    }
    return best != null ? best : Atlas.FACES.get(0);
  }

  private static List<Face> load() {
    try (InputStream raw = Glyphs.class.getResourceAsStream("glyphs.bin.gz")) {
      if (raw == null) {
        throw new IllegalStateException("glyphs.bin.gz is missing from the class path");
      }
      DataInputStream in = new DataInputStream(new GZIPInputStream(raw));
      if (in.readInt() != MAGIC) {
        throw new IllegalStateException("glyphs.bin.gz is not a glyph atlas");
      }
      List<Face> faces = new ArrayList<>();
      for (int f = in.readInt(); f > 0; f--) {
        int size = in.readInt();
        boolean bold = in.readBoolean();
        int ascent = in.readInt();
        int descent = in.readInt();
        Map<Character, Glyph> glyphs = new HashMap<>();
        for (int n = in.readInt(); n > 0; n--) {
          char c = in.readChar();
          float advance = in.readFloat();
          int x = in.readShort();
          int y = in.readShort();
          int w = in.readShort();
          int h = in.readShort();
          byte[] alpha = new byte[w * h];
          in.readFully(alpha);
          glyphs.put(c, new Glyph(advance, x, y, w, h, alpha));
        }
        faces.add(new Face(size, bold, ascent, descent, glyphs));
      }
      return faces;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String printableAscii() {
    StringBuilder s = new StringBuilder();
    for (char c = 32; c < 127; c++) {
      s.append(c);
    }
    return s.toString();
  }
}
