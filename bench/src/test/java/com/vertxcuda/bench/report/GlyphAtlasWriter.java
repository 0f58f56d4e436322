package com.vertxcuda.bench.report;

import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.font.FontRenderContext;
import java.awt.font.GlyphVector;
import java.awt.image.BufferedImage;
import java.io.DataOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.zip.GZIPOutputStream;

/**
 * Makes the report's glyph atlas ({@code glyphs.bin.gz} beside {@link Glyphs}) from DejaVu Sans with
 * Java2D: the report draws text from it, so it needs no fonts and no java.desktop where it runs (the
 * GPU bundle's runtime has neither). Not a test; run once on a JDK with the DejaVu fonts installed:
 * {@code java -cp bench/target/test-classes com.vertxcuda.bench.report.GlyphAtlasWriter OUT}.
 * DejaVu's glyphs are free to copy (Bitstream Vera licence).
 */
public final class GlyphAtlasWriter {

  private GlyphAtlasWriter() {
  }

  public static void main(String[] args) throws IOException {
    System.setProperty("java.awt.headless", "true");
    try (OutputStream file = new FileOutputStream(args[0]);
         DataOutputStream out = new DataOutputStream(new GZIPOutputStream(file))) {
      out.writeInt(Glyphs.MAGIC);
      Object[][] faces = {{Font.PLAIN, 11}, {Font.PLAIN, 13}, {Font.BOLD, 16}};
      out.writeInt(faces.length);
      for (Object[] face : faces) {
        write(out, new Font("DejaVu Sans", (Integer) face[0], (Integer) face[1]), (Integer) face[0] == Font.BOLD);
      }
    }
  }

  private static void write(DataOutputStream out, Font font, boolean bold) throws IOException {
    BufferedImage scratch = new BufferedImage(1, 1, BufferedImage.TYPE_BYTE_GRAY);
    Graphics2D g0 = scratch.createGraphics();
    g0.setFont(font);
    java.awt.FontMetrics m = g0.getFontMetrics();
    FontRenderContext frc = new FontRenderContext(null, true, true);
    String chars = Glyphs.CHARS;
    out.writeInt(font.getSize());
    out.writeBoolean(bold);
    out.writeInt(m.getAscent());
    out.writeInt(m.getDescent());
    out.writeInt(chars.length());
    for (char c : chars.toCharArray()) {
      GlyphVector gv = font.createGlyphVector(frc, String.valueOf(c));
      java.awt.Rectangle box = gv.getPixelBounds(frc, 0, 0);
      float advance = (float) gv.getGlyphMetrics(0).getAdvanceX();
      int w = Math.max(0, box.width);
      int h = Math.max(0, box.height);
      out.writeChar(c);
      out.writeFloat(advance);
      out.writeShort(box.x);
      out.writeShort(box.y);
      out.writeShort(w);
      out.writeShort(h);
      if (w == 0 || h == 0) {
        continue;
      }
      BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_BYTE_GRAY);
      Graphics2D g = img.createGraphics();
      g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
      g.setRenderingHint(RenderingHints.KEY_FRACTIONALMETRICS, RenderingHints.VALUE_FRACTIONALMETRICS_ON);
      g.setColor(java.awt.Color.WHITE);
      g.drawGlyphVector(gv, -box.x, -box.y);
      g.dispose();
      byte[] alpha = new byte[w * h];
      img.getRaster().getDataElements(0, 0, w, h, alpha);
      out.write(alpha);
    }
  }
}
