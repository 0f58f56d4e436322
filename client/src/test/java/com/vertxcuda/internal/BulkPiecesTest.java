package com.vertxcuda.internal;

import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A side-channel frame as Netty cut it: pieces of any size, values split across them. Read into an
 * array, every value lands whole where it belongs, with no copy of the frame gathered first.
 */
class BulkPiecesTest {

  private static List<Buffer> cut(byte[] frame, Random random, int largest) {
    List<Buffer> pieces = new ArrayList<>();
    for (int at = 0; at < frame.length; ) {
      int n = Math.min(frame.length - at, 1 + random.nextInt(largest));
      pieces.add(Buffer.buffer().appendBytes(frame, at, n));
      at += n;
    }
    return pieces;
  }

  @Test
  void floatsAndDoublesSplitAcrossPiecesLandWhole() {
    Random random = new Random(3);
    for (int round = 0; round < 50; round++) {
      float[] floats = new float[1 + random.nextInt(500)];
      ByteBuffer le = ByteBuffer.allocate(floats.length * 4).order(ByteOrder.LITTLE_ENDIAN);
      for (int i = 0; i < floats.length; i++) {
        floats[i] = random.nextFloat() * 1000 - 500;
        le.putFloat(floats[i]);
      }
      // The frame is the second part of the download: values from 7 on.
      float[] into = new float[floats.length + 7];
      BulkTransfer.readPieces(HostElements.of(into), 7 * 4, cut(le.array(), random, 1 + random.nextInt(40)));
      float[] expected = new float[into.length];
      System.arraycopy(floats, 0, expected, 7, floats.length);
      assertArrayEquals(expected, into, "round " + round);
    }
    double[] doubles = {1.5, -2.25, Math.PI, 1e300, -0.0};
    ByteBuffer le = ByteBuffer.allocate(40).order(ByteOrder.LITTLE_ENDIAN);
    for (double d : doubles) {
      le.putDouble(d);
    }
    double[] into = new double[5];
    BulkTransfer.readPieces(HostElements.of(into), 0, cut(le.array(), random, 3)); // every value split
    assertArrayEquals(doubles, into);
  }

  @Test
  void aFrameThatEndsInsideAValueIsRefused() {
    float[] into = new float[2];
    List<Buffer> pieces = List.of(Buffer.buffer(new byte[] {0, 0, (byte) 0x80, 0x3f, 0, 0}));
    assertThrows(IllegalStateException.class, () -> BulkTransfer.readPieces(HostElements.of(into), 0, pieces));
  }
}
