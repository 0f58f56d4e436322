package com.vertxcuda.library.rand;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The host generators against published answers and against themselves (skip-ahead == stepping). */
class GeneratorsTest {

  @Test
  void philoxKnownAnswers() {
    // Random123's known-answer vectors for philox4x32_10.
    int[] out = new int[4];
    Philox4x32.block(new int[] {0, 0, 0, 0}, 0, 0, out);
    assertArrayEquals(new int[] {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}, out);
    Philox4x32.block(new int[] {-1, -1, -1, -1}, -1, -1, out);
    assertArrayEquals(new int[] {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}, out);
    Philox4x32.block(new int[] {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, 0xa4093822, 0x299f31d0, out);
    assertArrayEquals(new int[] {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}, out);
  }

  private static int[] words(Bits bits, int n) {
    int[] w = new int[n];
    for (int i = 0; i < n; i++) {
      w[i] = bits.next();
    }
    return w;
  }

  private static int[] tail(int[] w, int from) {
    return java.util.Arrays.copyOfRange(w, from, w.length);
  }

  @Test
  void skippingAheadEqualsStepping() {
    int skip = 5003;
    assertArrayEquals(tail(words(new Philox4x32(42, 0), skip + 8), skip), words(new Philox4x32(42, skip), 8), "philox");
    assertArrayEquals(tail(words(new Xorwow(42, 0), skip + 8), skip), words(new Xorwow(42, skip), 8),
      "xorwow (matrix jump)");
    assertArrayEquals(tail(words(new Xorwow(42, 0), 108), 100), words(new Xorwow(42, 100), 8), "xorwow (stepping)");
    assertArrayEquals(tail(words(new Mrg32k3a(42, 0), skip + 8), skip), words(new Mrg32k3a(42, skip), 8), "mrg32k3a");
    assertArrayEquals(tail(words(new Sobol32(3, 0), 40), 32), words(new Sobol32(3, 32), 8), "sobol");
  }

  @Test
  void sobolFirstDimensionIsVanDerCorputInGrayCodeOrder() {
    int[] w = words(new Sobol32(0, 0), 4);
    assertArrayEquals(new int[] {0, 0x8000_0000, 0xC000_0000, 0x4000_0000}, w);
    // Every dimension's first 2^k points hit each of the 2^k dyadic intervals once.
    for (int d = 0; d < Sobol32.MAX_DIMENSIONS; d++) {
      int[] p = words(new Sobol32(d, 0), 64);
      boolean[] seen = new boolean[64];
      for (int x : p) {
        seen[x >>> 26] = true;
      }
      for (int i = 0; i < 64; i++) {
        assertEquals(true, seen[i], "dimension " + d + " interval " + i);
      }
    }
  }

  @Test
  void mersenneTwisterReferenceOutput() {
    // init_genrand(5489) starts 3499211612, 581869302, 3890346734 (the reference mt19937ar output).
    int[] w = words(new Mt19937(5489), 3);
    assertArrayEquals(new int[] {(int) 3499211612L, 581869302, (int) 3890346734L}, w);
  }

  @Test
  void poissonSaturatesAtTheLargestU32() {
    // A lambda past what 32 bits hold gives 2^32 - 1 read as unsigned, not 2^31 - 1.
    assertEquals(0xFFFF_FFFFL, Integer.toUnsignedLong(HostRandEngine.poisson(0.5, 1e300)));
    assertEquals(0, HostRandEngine.poisson(1e-12, 1e-9));
  }
}
