package com.vertxcuda.bench.report;

import org.junit.jupiter.api.Test;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The report's own drawing (java.base only): what it draws is in the PNG, and axes read as people read them. */
class ChartDrawingTest {

  @Test
  void pngHoldsWhatWasDrawn() throws Exception {
    RasterCanvas c = new RasterCanvas(64, 32);
    c.fill(0, 0, 10, 10, 0xFF0000);
    c.stroke(new double[] {20, 60}, new double[] {20.5, 20.5}, 3, 0x0000FF, null);
    c.text("Hi", 30, 12, Canvas.TextStyle.of(11, 0x000000, Canvas.Anchor.START));
    BufferedImage png = ImageIO.read(new ByteArrayInputStream(c.png()));
    assertEquals(64, png.getWidth());
    assertEquals(32, png.getHeight());
    assertEquals(0xFF0000, png.getRGB(5, 5) & 0xFFFFFF);
    assertEquals(0x0000FF, png.getRGB(40, 20) & 0xFFFFFF, "inside the 3 px line");
    assertEquals(0xFFFFFF, png.getRGB(40, 26) & 0xFFFFFF, "away from it");
    for (int y = 0; y < 32; y++) {
      for (int x = 0; x < 64; x++) {
        assertEquals(c.pixel(x, y), png.getRGB(x, y) & 0xFFFFFF, x + "," + y);
      }
    }
    long text = 0;
    for (int y = 0; y < 14; y++) {
      for (int x = 28; x < 50; x++) {
        text += (c.pixel(x, y) & 0xFF) < 0x80 ? 1 : 0;
      }
    }
    assertTrue(text > 10, "the glyphs left ink: " + text);
  }

  @Test
  void axesTickAndLabelAsPeopleRead() {
    Axis bytes = new Axis("payload", Axis.Scale.LOG, Axis.Format.BYTES);
    List<Double> t = bytes.ticks(4, 64 << 20);
    assertTrue(t.get(0) <= 4 && t.get(t.size() - 1) >= 64 << 20 && t.size() <= 10, t.toString());
    assertEquals("1 KiB", bytes.label(1024));
    assertEquals("64 MiB", bytes.label(64 << 20));
    Axis time = new Axis("latency", Axis.Scale.LOG, Axis.Format.MICROSECONDS);
    assertEquals(List.of(1.0, 10.0, 100.0, 1000.0, 10000.0), time.ticks(3, 9000));
    assertEquals("20 \u00b5s", time.label(20));
    assertEquals("1 ms", time.label(1000));
    Axis nines = new Axis("fraction", Axis.Scale.NINES, Axis.Format.FRACTION);
    assertEquals(List.of(0.0, 0.9, 0.99, 0.999), nines.ticks(0, 0.999));
    assertEquals("99.9 %", nines.label(0.999));
    assertEquals(0.5, nines.fraction(0.99, 0, 0.9999), 1e-9, "two nines of four halfway up");
  }

  @Test
  void chartsDrawTheSameOnBothCanvases() {
    Chart c = Chart.lines("t", "A title", "a note", new Axis("x", Axis.Scale.LOG, Axis.Format.POWER_OF_TWO),
      new Axis("y", Axis.Scale.LOG, Axis.Format.MICROSECONDS), List.of(new Chart.Line("raw", 0x222222, null, 2,
        new double[] {64, 128, 256}, new double[] {10, 40, 160})), List.of(new Chart.Rule(20, "rule")));
    String svg = c.svg();
    assertTrue(svg.startsWith("<svg") && svg.contains("A title") && svg.contains("<polyline"), svg);
    BufferedImage png;
    try {
      png = ImageIO.read(new ByteArrayInputStream(c.png()));
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
    assertEquals(Chart.WIDTH, png.getWidth());
  }
}
